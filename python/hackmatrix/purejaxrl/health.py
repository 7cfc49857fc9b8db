"""Training health checks on each chunk's aggregated metrics (training.md §3.7).

Each check looks at a short window of recent chunks and answers PROBLEM,
CLEAR or UNKNOWN (not enough data, a NaN, or in the gap between the problem
and the healthy threshold). `HealthMonitor` turns those answers into
warnings that fire once per episode of trouble: when a check goes to
PROBLEM, and again only after it has gone back to CLEAR. The gap between the
two thresholds keeps a metric that hovers at the boundary from warning on
every other chunk.

Pure Python: the trainer's console, metrics.jsonl and W&B alerts consume the
`HealthWarning`s; the plot shades the same bands.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass

# ---------------------------------------------------------------- thresholds
# PPO step size (the bands come from the old trainer's runs; this one reads lower).
KL_HEALTHY = (0.01, 0.06)
KL_PROBLEM_ABOVE = 0.08
CLIP_HEALTHY_BELOW = 0.30
CLIP_PROBLEM_ABOVE = 0.35
# Masked entropy. A fresh policy already reads ~0.8 in this game (most states
# allow only a few actions), so "collapse" means close to 0, not below 1.
ENTROPY_COLLAPSE_BELOW = 0.2
ENTROPY_RECOVERED_ABOVE = 0.4
ENTROPY_HIGH_ABOVE = 2.5
ENTROPY_HIGH_CHUNKS = 20  # "for a long time"
# Oscillation: over the last OSCILLATION_WINDOW chunks, the second half's mean
# length is LENGTH_RISE_MIN (relative) above the first half's while the mean
# return moved by less than RETURN_FLAT_MAX of its size (at least 1.0).
OSCILLATION_WINDOW = 10
LENGTH_RISE_MIN = 0.20
RETURN_FLAT_MAX = 0.05
RETURN_SCALE_FLOOR = 1.0
# Siphon / program use: the share of the steps where the action was valid on
# which the policy took it. A fresh policy takes a valid siphon or program on
# ~25-40% of those steps; the failure mode drives it to ~0 within a million
# steps. Programs are valid on only ~1% of steps early on, hence the low floor.
ACTION_VALID_MIN = 0.002  # valid on fewer steps than this: cannot judge
ACTION_USE_COLLAPSE_BELOW = 0.01
ACTION_USE_RECOVERED_ABOVE = 0.02
# Siphon hoarding: data siphons carried beside blocks and left unused. A fresh
# policy has a siphon valid on ~4% of steps and takes it on ~35% of those; every
# run that later stopped siphoning first showed the valid share rising past 6%
# while the use fell below 25%, ~50 updates before siphon_collapse
# (specs/experiments/18-siphon-fork.md §18.3); runs that kept siphoning stayed at 1.5-5%
# valid, or >= 35% use.
HOARD_VALID_ABOVE = 0.06
HOARD_USE_BELOW = 0.25
HOARD_CLEAR_VALID_BELOW = 0.045
HOARD_CLEAR_USE_ABOVE = 0.35
# Sanity of the run itself.
STEP_PENALTY = -0.01
STEP_PENALTY_TOLERANCE = 1e-3

PROBLEM, CLEAR, UNKNOWN = "problem", "clear", "unknown"


@dataclass(frozen=True)
class HealthWarning:
    check: str  # short id, e.g. "approx_kl_high"
    metric: str  # the metric key it is about
    value: float
    healthy: str  # the healthy range, in words
    remedy: str
    update: int
    detail: str = ""  # extra numbers behind the verdict

    def text(self) -> str:
        detail = f" ({self.detail})" if self.detail else ""
        return (
            f"{self.metric} = {_fmt(self.value)}{detail}; healthy: {self.healthy}. "
            f"Remedy: {self.remedy}"
        )

    def to_json(self) -> dict:
        out = asdict(self)
        out["value"] = None if math.isnan(self.value) else self.value
        return out


@dataclass(frozen=True)
class Check:
    """One row of the health table.

    `assess(window)` gets the recent chunks' metric dicts, oldest first, and
    returns (verdict, value, detail).
    """

    name: str
    metric: str
    healthy: str
    remedy: str
    assess: Callable[[Sequence[dict]], tuple]


# ------------------------------------------------------------ metric access
def _get(metrics: dict, key: str) -> float:
    value = metrics.get(key)
    return math.nan if value is None else float(value)


def _fmt(value: float) -> str:
    if math.isnan(value):
        return "nan"
    return f"{value:.4f}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"


def _mean(values: Iterable[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return sum(finite) / len(finite) if finite else math.nan


# ------------------------------------------------------------ check builders
def threshold_check(
    name: str,
    metric: str,
    healthy: str,
    remedy: str,
    problem: Callable[[float], bool],
    clear: Callable[[float], bool],
) -> Check:
    """A check on the latest value of one metric, with a problem and a clear test."""

    def assess(window):
        value = _get(window[-1], metric)
        if math.isnan(value):
            return UNKNOWN, value, ""
        verdict = PROBLEM if problem(value) else CLEAR if clear(value) else UNKNOWN
        return verdict, value, ""

    return Check(name, metric, healthy, remedy, assess)


def sustained_entropy_check() -> Check:
    def assess(window):
        recent = [_get(m, "train/entropy") for m in window[-ENTROPY_HIGH_CHUNKS:]]
        latest = recent[-1]
        if math.isnan(latest):
            return UNKNOWN, latest, ""
        if latest <= ENTROPY_HIGH_ABOVE:
            return CLEAR, latest, ""
        if len(recent) == ENTROPY_HIGH_CHUNKS and all(v > ENTROPY_HIGH_ABOVE for v in recent):
            return PROBLEM, latest, f"above {ENTROPY_HIGH_ABOVE} for {ENTROPY_HIGH_CHUNKS} chunks"
        return UNKNOWN, latest, ""

    return Check(
        "entropy_high",
        "train/entropy",
        f"<= {ENTROPY_HIGH_ABOVE} (not stuck above it)",
        "the entropy bonus dominates the policy loss: lower --ent-coef",
        assess,
    )


def oscillation_check() -> Check:
    """Episodes getting longer while the return stays flat: stalling or walking back and forth."""

    def assess(window):
        if len(window) < OSCILLATION_WINDOW:
            return UNKNOWN, math.nan, ""
        recent = window[-OSCILLATION_WINDOW:]
        half = OSCILLATION_WINDOW // 2
        lengths = [_get(m, "train/mean_episode_length") for m in recent]
        returns = [_get(m, "train/mean_episode_return") for m in recent]
        length_before, length_after = _mean(lengths[:half]), _mean(lengths[half:])
        return_before, return_after = _mean(returns[:half]), _mean(returns[half:])
        if any(math.isnan(v) for v in (length_before, length_after, return_before, return_after)):
            return UNKNOWN, math.nan, ""
        length_rise = (length_after - length_before) / max(length_before, 1.0)
        scale = max(abs(return_before), RETURN_SCALE_FLOOR)
        return_rise = (return_after - return_before) / scale
        detail = (
            f"length {length_before:.1f} -> {length_after:.1f} (+{length_rise:.0%}), "
            f"return {return_before:.2f} -> {return_after:.2f} over {OSCILLATION_WINDOW} chunks"
        )
        if length_rise >= LENGTH_RISE_MIN and return_rise < RETURN_FLAT_MAX:
            return PROBLEM, length_after, detail
        return CLEAR, length_after, ""

    return Check(
        "length_up_return_flat",
        "train/mean_episode_length",
        "length rising together with the return",
        "the agent stalls or walks back and forth instead of progressing: check "
        "reward/distance_shaping and reward/step_penalty, lower --lr or raise --ent-coef",
        assess,
    )


def action_collapse_check(action: str) -> Check:
    """`action` ("siphon" or "program") is valid often but almost never taken."""
    taken_key, valid_key = f"actions/{action}_frac", f"actions/{action}_valid_frac"

    def assess(window):
        taken, valid = _get(window[-1], taken_key), _get(window[-1], valid_key)
        if math.isnan(taken) or math.isnan(valid) or valid < ACTION_VALID_MIN:
            return UNKNOWN, taken, ""
        use = taken / valid
        detail = f"taken on {use:.2%} of the {valid:.1%} of steps where it was valid"
        if use < ACTION_USE_COLLAPSE_BELOW:
            return PROBLEM, taken, detail
        return (CLEAR if use > ACTION_USE_RECOVERED_ABOVE else UNKNOWN), taken, detail

    remedy = {
        "siphon": "the policy stopped siphoning: check that reward/siphon_death_penalty and "
        "reward/siphon_quality do not outweigh reward/data_siphon; raise --ent-coef, "
        "or resume from a checkpoint before the collapse",
        "program": "the policy stopped using programs: check reward/program_waste and "
        "reward/resource_gain; raise --ent-coef, or resume from a checkpoint "
        "before the collapse",
    }[action]
    return Check(
        f"{action}_collapse",
        taken_key,
        f"taken on >= {ACTION_USE_RECOVERED_ABOVE:.0%} of the steps where valid",
        remedy,
        assess,
    )


def siphon_hoarding_check() -> Check:
    """Siphons valid on more and more steps while the policy takes fewer of them: the early
    sign of a siphon collapse."""

    def assess(window):
        taken = _get(window[-1], "actions/siphon_frac")
        valid = _get(window[-1], "actions/siphon_valid_frac")
        if math.isnan(taken) or math.isnan(valid) or valid < ACTION_VALID_MIN:
            return UNKNOWN, valid, ""
        use = taken / valid
        detail = f"siphon valid on {valid:.1%} of steps and taken on {use:.0%} of those"
        if valid >= HOARD_VALID_ABOVE and use < HOARD_USE_BELOW:
            return PROBLEM, valid, detail
        if valid < HOARD_CLEAR_VALID_BELOW or use >= HOARD_CLEAR_USE_ABOVE:
            return CLEAR, valid, detail
        return UNKNOWN, valid, detail

    return Check(
        "siphon_hoarding",
        "actions/siphon_valid_frac",
        f"< {HOARD_CLEAR_VALID_BELOW:.1%} of steps, or siphon taken on >= "
        f"{HOARD_CLEAR_USE_ABOVE:.0%} of them (a fresh policy: ~4%, ~35%)",
        "the policy carries data siphons beside blocks without using them, which came before "
        "every siphon collapse seen (specs/experiments/18-siphon-fork.md): check what outweighs "
        "reward/data_siphon (program levers can wait: --program-levers-from-update), pay a "
        "data siphon only when it is spent (--siphon-pay-on-use, "
        "specs/experiments/28-siphon-pay-on-use.md), raise --ent-coef, or resume from a "
        "checkpoint before this warning; late in a long run it can be a false alarm "
        "(specs/experiments/22-staged-default-100M.md): if eval/siphons_per_episode still "
        "rises, carry on",
        assess,
    )


def default_checks() -> list[Check]:
    return [
        threshold_check(
            "approx_kl_high",
            "train/approx_kl",
            f"{KL_HEALTHY[0]}-{KL_HEALTHY[1]}, problem above {KL_PROBLEM_ABOVE}",
            "updates too large for the number of gradient steps: lower --lr "
            "(lr x gradient_steps ~ 4e-3, training.md §1.5)",
            problem=lambda v: v > KL_PROBLEM_ABOVE,
            clear=lambda v: v <= KL_HEALTHY[1],
        ),
        threshold_check(
            "clip_frac_high",
            "train/clip_frac",
            f"< {CLIP_HEALTHY_BELOW}, problem above {CLIP_PROBLEM_ABOVE}",
            "same cause as a high KL: lower --lr or --update-epochs",
            problem=lambda v: v > CLIP_PROBLEM_ABOVE,
            clear=lambda v: v < CLIP_HEALTHY_BELOW,
        ),
        threshold_check(
            "entropy_collapse",
            "train/entropy",
            f">= {ENTROPY_RECOVERED_ABOVE} (a fresh policy reads ~0.8), collapse below "
            f"{ENTROPY_COLLAPSE_BELOW}",
            "stop, raise --ent-coef to 0.15-0.2 and start fresh rather than resume",
            problem=lambda v: v < ENTROPY_COLLAPSE_BELOW,
            clear=lambda v: v >= ENTROPY_RECOVERED_ABOVE,
        ),
        sustained_entropy_check(),
        oscillation_check(),
        siphon_hoarding_check(),
        action_collapse_check("siphon"),
        action_collapse_check("program"),
        threshold_check(
            "step_penalty_off",
            "reward/step_penalty",
            f"{STEP_PENALTY}",
            "the reward breakdown is broken: check the env's reward components (rewards.md)",
            problem=lambda v: abs(v - STEP_PENALTY) > STEP_PENALTY_TOLERANCE,
            clear=lambda v: abs(v - STEP_PENALTY) <= STEP_PENALTY_TOLERANCE,
        ),
        threshold_check(
            "empty_mask",
            "stats/empty_mask_steps",
            "0",
            "the engine produced states without a legal action: report it with the seed",
            problem=lambda v: v > 0,
            clear=lambda v: v == 0,
        ),
    ]


class HealthMonitor:
    """Runs the checks on each chunk and reports each episode of trouble once."""

    def __init__(self, checks: Sequence[Check] | None = None):
        self.checks = list(checks if checks is not None else default_checks())
        self.window: deque = deque(maxlen=max(OSCILLATION_WINDOW, ENTROPY_HIGH_CHUNKS))
        self.active: set[str] = set()

    def prime(self, records: Iterable[dict]) -> None:
        """Fill the window from earlier chunks (a resume) without warning about them.

        Problems still present after a resume are announced again at its first chunk.
        """
        for record in records:
            self.window.append(record)

    def observe(self, update: int, metrics: dict) -> list[HealthWarning]:
        self.window.append(metrics)
        window = list(self.window)
        fired = []
        for check in self.checks:
            verdict, value, detail = check.assess(window)
            if verdict == PROBLEM and check.name not in self.active:
                self.active.add(check.name)
                fired.append(
                    HealthWarning(
                        check.name, check.metric, value, check.healthy, check.remedy, update, detail
                    )
                )
            elif verdict == CLEAR:
                self.active.discard(check.name)
        return fired


__all__ = [
    "HealthMonitor",
    "HealthWarning",
    "Check",
    "default_checks",
    "PROBLEM",
    "CLEAR",
    "UNKNOWN",
]
