"""The trained policy that ships with the project (`MODEL_CARD.md` beside this file).

`policy.npz` holds the network's parameters (dotted keys, as a run's `params_N.npz`)
and `policy.json` the training config of the run it came from, so every tool
rebuilds the same network and plans with the same discount. The tools' flag
`--pretrained` (and the policy name `pretrained`) mean `PRETRAINED_PARAMS`.
"""

from __future__ import annotations

from pathlib import Path

PRETRAINED_DIR = Path(__file__).resolve().parent
PRETRAINED_PARAMS = PRETRAINED_DIR / "policy.npz"
PRETRAINED_CONFIG = PRETRAINED_DIR / "policy.json"
MODEL_CARD = PRETRAINED_DIR / "MODEL_CARD.md"

# The name a policy argument may give instead of a path (hackmatrix-evaluate pretrained).
PRETRAINED_NAME = "pretrained"


def pretrained_params() -> Path:
    """The shipped parameters file; FileNotFoundError says what is missing and why."""
    if not PRETRAINED_PARAMS.is_file():
        raise FileNotFoundError(
            f"the shipped policy {PRETRAINED_PARAMS} is missing: reinstall the package "
            "(python/scripts/setup_env.sh) or check out python/hackmatrix/pretrained/ again"
        )
    return PRETRAINED_PARAMS
