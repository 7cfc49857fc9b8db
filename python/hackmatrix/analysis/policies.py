"""What the behaviour evaluation plays: a `Policy` (a label, and a network with its
parameters, or none for the random policy), and loading one from what a user names:
`random`, `latest`, a `.npz`, a `.pkl`, a run directory, or a run's last few or chosen
checkpoints to pool (training.md §9.8).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .choosers import RANDOM


class EvaluationError(ValueError):
    """Bad evaluation input (policy name, counts); the message says what to change."""


@dataclass
class Policy:
    """What to evaluate: a label, and a network with parameters (None for the random policy)."""

    label: str
    network: Any = None
    params: Any = None
    source: str | None = None
    config: dict = field(default_factory=dict)

    @property
    def is_random(self) -> bool:
        return self.network is None


def pooled_label(policies: list[Policy]) -> str:
    """`run/checkpoint_852..checkpoint_932 (3 pooled)` for the checkpoints of one run; a
    lone policy keeps its own label."""
    if len(policies) == 1:
        return policies[0].label
    last = policies[-1].label.rsplit("/", 1)[-1]
    return f"{policies[0].label}..{last} ({len(policies)} pooled)"


def load_policy_spec(text: str, *, checkpoint_dir: Path | str = "checkpoints") -> Policy:
    """`random`, `latest`, `pretrained` (the shipped policy), a `.npz`, a `.pkl` or a run
    directory -> a `Policy`."""
    from ..pretrained import PRETRAINED_NAME, pretrained_params
    from ..purejaxrl.checkpoint import CheckpointError, latest_run_checkpoint, load_policy

    if text == RANDOM:
        return Policy(label=RANDOM)
    try:
        if text == PRETRAINED_NAME:
            path = pretrained_params()
        elif text == "latest":
            path = latest_run_checkpoint(Path(checkpoint_dir))
        else:
            path = Path(text)
        stored = load_policy(path)
    except (CheckpointError, FileNotFoundError) as error:
        raise EvaluationError(str(error)) from error
    source = stored.source
    label = f"{source.parent.name}/{source.stem}" if source.parent.name else source.stem
    if text == PRETRAINED_NAME:
        label = PRETRAINED_NAME
    return Policy(
        label=label,
        network=stored.network,
        params=stored.params,
        source=str(source),
        config=stored.config,
    )


def _pooled_run_dir(text: str, flag: str, checkpoint_dir: Path | str) -> Path:
    """The run directory a pooling flag reads: a run directory, or `latest`."""
    from ..purejaxrl.checkpoint import CheckpointError, latest_run_checkpoint

    try:
        run = latest_run_checkpoint(Path(checkpoint_dir)).parent if text == "latest" else None
    except CheckpointError as error:
        raise EvaluationError(str(error)) from error
    run = run or Path(text)
    if not run.exists():
        raise EvaluationError(f"{text}: no such run directory")
    if not run.is_dir():
        raise EvaluationError(
            f"{text}: {flag} pools a run's checkpoints; give its run directory (or latest), "
            "not one file"
        )
    return run


def last_checkpoint_policies(
    text: str, count: int, *, checkpoint_dir: Path | str = "checkpoints"
) -> list[Policy]:
    """The `count` newest checkpoints of a run (a run directory, or `latest`), oldest
    first: what `--last-checkpoints` pools. `random` stays one policy."""
    from ..purejaxrl.checkpoint import checkpoints_in

    if count < 1:
        raise EvaluationError(f"--last-checkpoints must be at least 1, got {count}")
    if count == 1 or text == RANDOM:
        return [load_policy_spec(text, checkpoint_dir=checkpoint_dir)]
    run = _pooled_run_dir(text, f"--last-checkpoints {count}", checkpoint_dir)
    found = checkpoints_in(run)
    if len(found) < count:
        raise EvaluationError(
            f"run directory {run}: holds {len(found)} checkpoint_*.pkl, "
            f"fewer than --last-checkpoints {count}"
        )
    return [load_policy_spec(str(path)) for _, path in found[-count:]]


def chosen_checkpoint_policies(
    text: str, updates: list[int], *, checkpoint_dir: Path | str = "checkpoints"
) -> list[Policy]:
    """The checkpoints of a run saved at the named updates, oldest first: what
    `--checkpoint-updates` pools, so that two runs saved on different updates can be read
    at the same ones without copying checkpoints aside. `random` stays one policy."""
    from ..purejaxrl.checkpoint import checkpoints_in

    if not updates:
        raise EvaluationError("--checkpoint-updates needs at least one update")
    if any(update < 0 for update in updates):
        raise EvaluationError(f"--checkpoint-updates must be updates >= 0, got {updates}")
    if len(set(updates)) != len(updates):
        raise EvaluationError(f"--checkpoint-updates names an update twice: {updates}")
    if text == RANDOM:
        return [load_policy_spec(text, checkpoint_dir=checkpoint_dir)]
    run = _pooled_run_dir(text, "--checkpoint-updates", checkpoint_dir)
    saved = dict(checkpoints_in(run))
    missing = [update for update in updates if update not in saved]
    if missing:
        held = ", ".join(str(update) for update in sorted(saved)) or "none"
        raise EvaluationError(
            f"run directory {run}: no checkpoint_*.pkl for update(s) "
            f"{', '.join(map(str, missing))} (saved: {held})"
        )
    return [load_policy_spec(str(saved[update])) for update in sorted(updates)]


def with_value_of(prior: Policy, value: Policy) -> Policy:
    """`prior`'s policy with `value`'s value head, as one policy for the search to read
    (`search.prior_and_value`). The config is `value`'s: the search's discount, value
    scale and trained tree reward describe the value it adds to its tree."""
    from ..search.prior_and_value import PriorAndValue

    if prior.is_random or value.is_random:
        raise EvaluationError("a value from another network needs two networks, not random")
    return Policy(
        label=f"{prior.label} + value of {value.label}",
        network=PriorAndValue(prior=prior.network, value=value.network),
        params=(prior.params, value.params),
        source=prior.source,
        config=value.config,
    )
