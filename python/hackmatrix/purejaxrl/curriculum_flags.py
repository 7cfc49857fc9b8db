"""Curriculum-start flags of the trainer (training.md §1.1, §1.7).

Parsing, named curricula, checks and the anneal schedule. The flags themselves are
declared in `config.TrainConfig` (section "curriculum"); on a resume the stored
curriculum continues as a whole unless a curriculum flag is given (`resolve.py`).

Plain Python (no JAX), so bad values fail with the flag's name before anything
is built. The game side (which starts are legal, how they are drawn) is
`hackmatrix.jax_env.curriculum`; `env_params_for` turns these settings into
its `EnvParams`.
"""

from __future__ import annotations

import dataclasses
import math
from types import ModuleType
from typing import Any

from ..names import LAST_STAGE, MAX_OCCUPANTS, NUM_PROGRAMS

NUM_STAGES = LAST_STAGE  # game-rules.md §0

# Named curricula (`--curriculum NAME`); a field flag given beside one overrides that field.
PRESETS: dict[str, dict[str, str]] = {
    # Every stage, some programs and resources to spend on them; stage 1 stays the most common.
    "mixed": {
        "stages": "1:0.3,2:0.1,3:0.1,4:0.1,5:0.1,6:0.1,7:0.1,8:0.1",
        "programs": "0-6",
        "credits": "0-20",
        "energy": "0-20",
        "data_siphons": "0-2",
    },
    # The canonical first stage, but holding programs and the means to run them.
    "programs": {
        "stages": "1:1",
        "programs": "3-10",
        "credits": "5-25",
        "energy": "5-25",
        "data_siphons": "0-1",
    },
    # The hard end of the game: stages 5..8 with a full kit.
    "late": {
        "stages": "5:0.25,6:0.25,7:0.25,8:0.25",
        "programs": "4-12",
        "credits": "10-40",
        "energy": "10-40",
        "data_siphons": "1-3",
    },
}
FIELDS = ("stages", "programs", "credits", "energy", "data_siphons", "transmissions")


@dataclasses.dataclass(frozen=True)
class Curriculum:
    """A checked curriculum: stage weights for stages 1..8 and [lo, hi] ranges."""

    stage_weights: tuple[float, ...]
    programs: tuple[int, int]
    credits: tuple[int, int]
    energy: tuple[int, int]
    data_siphons: tuple[int, int]
    p0: float
    anneal: float | None  # fraction of the updates after which p reaches 0; None: p0 throughout
    transmissions: tuple[int, int] = (0, 0)  # siphon transmissions pending at the start

    def probability(self, update: int, num_updates: int) -> float:
        """Chance that a reset during `update` (0-based) is a curriculum start."""
        if self.anneal is None:
            return self.p0
        end = self.anneal * num_updates
        return self.p0 * max(0.0, 1.0 - update / end) if end > 0 else 0.0

    def describe(self) -> str:
        stages = ",".join(f"{s + 1}:{w:g}" for s, w in enumerate(self.stage_weights) if w > 0)
        ranges = " ".join(
            f"{name}={lo}-{hi}"
            for name, (lo, hi) in (
                ("programs", self.programs),
                ("credits", self.credits),
                ("energy", self.energy),
                ("data_siphons", self.data_siphons),
                ("transmissions", self.transmissions),
            )
        )
        schedule = (
            f"p={self.p0:g} throughout"
            if self.anneal is None
            else f"p={self.p0:g} falling linearly to 0 at {self.anneal:g} of training"
        )
        return f"stages {stages}; {ranges}; {schedule}"


def parse_stages(text: str) -> tuple[float, ...]:
    """`"1:0.5,2:0.1,8:0.4"` -> weights of stages 1..8.

    Stages not named weigh 0; the weights need not sum to 1.
    """
    weights = [0.0] * NUM_STAGES
    seen = set()
    for item in text.split(","):
        stage, sep, weight = (part.strip() for part in item.partition(":"))
        if not sep or not stage.isdigit() or not 1 <= int(stage) <= NUM_STAGES:
            raise ValueError(
                f"--curriculum-stages: expected STAGE:WEIGHT pairs with stages 1..{NUM_STAGES}, "
                f"got {item.strip()!r} in {text!r}"
            )
        try:
            value = float(weight)
        except ValueError:
            raise ValueError(
                f"--curriculum-stages: weight of stage {stage} is not a number: {weight!r}"
            ) from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(
                f"--curriculum-stages: weight of stage {stage} must be finite and >= 0, "
                f"got {weight!r}"
            )
        if int(stage) in seen:
            raise ValueError(f"--curriculum-stages: stage {stage} is given twice")
        seen.add(int(stage))
        weights[int(stage) - 1] = value
    if sum(weights) <= 0:
        raise ValueError(
            f"--curriculum-stages: at least one stage needs a positive weight, got {text!r}"
        )
    return tuple(weights)


def parse_range(text: str, flag: str, top: int | None = None) -> tuple[int, int]:
    """`"a-b"` (or `"a"` for a-a) -> (a, b) with 0 <= a <= b (<= top)."""
    lo, sep, hi = (part.strip() for part in text.strip().partition("-"))
    if not lo.isdigit() or (sep and not hi.isdigit()):
        raise ValueError(
            f"{flag}: expected a range of non-negative integers a-b (or one integer), got {text!r}"
        )
    bounds = (int(lo), int(hi) if sep else int(lo))
    if bounds[0] > bounds[1]:
        raise ValueError(f"{flag}: the range {text!r} is empty (lower end above the upper end)")
    if top is not None and bounds[1] > top:
        raise ValueError(f"{flag}: at most {top}, got {text!r}")
    return bounds


def resolve(config: Any) -> Curriculum | None:
    """The curriculum the config asks for, or None (canonical starts only).

    Raises ValueError on bad values.
    """
    given = {name: getattr(config, f"curriculum_{name}") for name in FIELDS}
    if config.curriculum is None and all(v is None for v in given.values()):
        if config.curriculum_anneal is not None or config.curriculum_p0 != 1.0:
            raise ValueError(
                "--curriculum-p0 and --curriculum-anneal need a curriculum "
                "(--curriculum PRESET or a --curriculum-stages/-programs/... flag)"
            )
        return None
    if config.curriculum is not None and config.curriculum not in PRESETS:
        raise ValueError(
            f"--curriculum: unknown preset {config.curriculum!r}; presets: {', '.join(PRESETS)}"
        )
    values = dict.fromkeys(FIELDS, "0") | {"stages": "1:1"}
    values.update(PRESETS.get(config.curriculum, {}))
    values.update({name: v for name, v in given.items() if v is not None})
    p0, anneal = config.curriculum_p0, config.curriculum_anneal
    if not (isinstance(p0, (int, float)) and 0.0 <= p0 <= 1.0):
        raise ValueError(f"--curriculum-p0 must be a probability in [0, 1], got {p0!r}")
    if anneal is not None and not (isinstance(anneal, (int, float)) and 0.0 < anneal <= 1.0):
        raise ValueError(
            f"--curriculum-anneal must be a fraction of training in (0, 1], got {anneal!r}"
        )
    return Curriculum(
        stage_weights=parse_stages(values["stages"]),
        programs=parse_range(values["programs"], "--curriculum-programs", NUM_PROGRAMS),
        credits=parse_range(values["credits"], "--curriculum-credits"),
        energy=parse_range(values["energy"], "--curriculum-energy"),
        data_siphons=parse_range(values["data_siphons"], "--curriculum-data-siphons"),
        p0=float(p0),
        anneal=None if anneal is None else float(anneal),
        transmissions=parse_range(
            # More pending than cells to place them would only be lost (game-rules.md §0).
            values["transmissions"],
            "--curriculum-transmissions",
            MAX_OCCUPANTS,
        ),
    )


def env_params_for(env: ModuleType, curriculum: Curriculum | None, probability: float) -> Any:
    """The env's params for one chunk: the canonical `EnvParams()` when there is no curriculum."""
    if curriculum is None:
        return env.EnvParams()
    if not hasattr(env, "curriculum_params"):
        raise ValueError(
            f"the game module {getattr(env, '__name__', env)!r} has no curriculum starts "
            f"(it lacks curriculum_params); drop the --curriculum* flags"
        )
    return env.curriculum_params(
        probability,
        curriculum.stage_weights,
        programs=curriculum.programs,
        credits=curriculum.credits,
        energy=curriculum.energy,
        data_siphons=curriculum.data_siphons,
        transmissions=curriculum.transmissions,
    )
