"""Trainer configuration: command-line flags, derived sizes and batch auto-scaling.

Everything here is plain Python (no JAX), so the config can be parsed, checked
and printed before any compilation starts (training.md §1).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from . import curriculum_flags

# Reference setting that auto-scaling keeps the minibatch size of (§1.3).
REFERENCE_BATCH = 256 * 128
REFERENCE_MINIBATCHES = 4
REFERENCE_EPOCHS = 4
MAX_MINIBATCHES = 64
MIN_SCALED_EPOCHS = 2
# Learning-rate rule of thumb: keep lr x gradient_steps near this (§1.5).
LR_STEPS_PRODUCT = 4e-3
# Marker for a bare `--resume` (no value): resume the latest run.
RESUME_LATEST = "__latest__"
# `--program-bonus-scale`: how a taken program's bonus is sized (training.md §1.1).
PROGRAM_BONUS_SCALES = ("flat", "spawn-cost")
# `--value-target`: the scale the value head learns on (training.md §2.6, value_target.py).
VALUE_TARGETS = ("raw", "symlog")


@dataclasses.dataclass
class TrainConfig:
    """All trainer settings. `None` for minibatches/epochs means "auto-scale"."""

    num_envs: int = 256
    num_steps: int = 128
    total_timesteps: int = 10_000_000
    lr: float = 2.5e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int | None = None
    update_epochs: int | None = None
    clip_eps: float = 0.2
    vf_coef: float = 0.5
    # `--value-target`: "raw" (the head predicts the return) or "symlog" (its symlog).
    value_target: str = "raw"
    ent_coef: float = 0.15
    # `--ent-coef-final` / `--ent-coef-anneal`: the entropy coefficient moves linearly from
    # ent_coef to ent_coef_final over that fraction of the updates; None: constant ent_coef.
    ent_coef_final: float | None = None
    ent_coef_anneal: float | None = None
    # `--ent-coef-programs`: an entropy bonus on the two-way choice "run a program or not"
    # where both are valid (training.md §1.1, learning.md §24); 0: off, the loss as before.
    ent_coef_programs: float = 0.0
    max_grad_norm: float = 0.5
    hidden_dim: int = 256
    num_layers: int = 2
    log_interval: int = 10
    seed: int = 0
    bf16: bool = False
    # {component name: weight} for `--reward-weights`; None trains on the env's reward as is.
    reward_weights: dict[str, float] | None = None
    # `--reward-weights-anneal`: fraction of the updates over which every weight moves
    # linearly to 1 (the canonical reward); None keeps the weights for the whole run.
    reward_weights_anneal: float | None = None
    # `--reward-weights-final`: the weights the anneal ends at ({name: w}, 1 for those not
    # named); None: 1 for every component, i.e. the canonical reward.
    reward_weights_final: dict[str, float] | None = None
    # `--program-bonus`: reward per program taken into hand (0: off, training.md §1.1).
    program_bonus: float = 0.0
    # `--program-bonus-scale`: "flat" (every program pays --program-bonus) or "spawn-cost"
    # (a program pays --program-bonus x its block's spawn cost; learning.md §21).
    program_bonus_scale: str = "flat"
    # `--program-bonus-at-death`: "pay" (a program taken on the step the player dies pays
    # too) or "withhold" (it pays nothing: it can never be run; learning.md §17.2).
    program_bonus_at_death: str = "pay"
    # `--program-use-bonus`: reward for the first program run in an episode (0: off, §1.1).
    program_use_bonus: float = 0.0
    # `--free-program-spending`: refund resource_gain's charge for what a program spends
    # (training.md §1.1); False trains on the env's resource_gain as is.
    free_program_spending: bool = False
    # `--siphon-pay-on-use`: data_siphon's pay moves from picking a data siphon up to
    # spending it (training.md §1.1, learning.md §28); not a program lever (never delayed).
    siphon_pay_on_use: bool = False
    # `--program-levers-from-update`: the three program levers above pay nothing before this
    # update (learning.md §18.4: a habit of siphoning first); 0: from the start.
    program_levers_from_update: int = 0
    # `--distance-shaping`: "canonical" (one-directional, the env's reward) or "potential"
    # (a lost cell costs what a gained one pays; training.md §1.1).
    distance_shaping: str = "canonical"
    # `--max-episode-steps`: truncate an episode after this many actions, bootstrapping
    # from the value of its last observation (training.md §2.5); 0: no limit.
    max_episode_steps: int = 0
    network: str = "mlp"  # "mlp" or "grid" (training.md §2.3)
    # Curriculum starts (§1.7, curriculum_flags.py); all unset: canonical starts only.
    curriculum: str | None = None
    curriculum_stages: str | None = None
    curriculum_programs: str | None = None
    curriculum_credits: str | None = None
    curriculum_energy: str | None = None
    curriculum_data_siphons: str | None = None
    curriculum_transmissions: str | None = None
    curriculum_p0: float = 1.0
    curriculum_anneal: float | None = None

    # -- derived quantities (§1.2); valid once minibatches/epochs are resolved --
    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def num_updates(self) -> int:
        return self.total_timesteps // self.batch_size

    @property
    def minibatch_size(self) -> int:
        return self.batch_size // self._resolved("num_minibatches")

    @property
    def gradient_steps(self) -> int:
        return self._resolved("num_minibatches") * self._resolved("update_epochs")

    def _resolved(self, name: str) -> int:
        """`num_minibatches` / `update_epochs`, which are None until auto-scaling sets them."""
        value = getattr(self, name)
        if value is None:
            raise ValueError(f"{name} is unset: call auto_scale_for_batch_size first")
        return value

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TrainConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


@dataclasses.dataclass
class AutoScaleReport:
    """What auto-scaling did, for the start-up printout."""

    batch_size: int
    scale: int
    before: dict[str, int]
    after: dict[str, int]
    lr_hint: float

    @property
    def changed(self) -> bool:
        return self.before != self.after


def auto_scale_for_batch_size(config: TrainConfig) -> AutoScaleReport:
    """Resolve `num_minibatches` / `update_epochs` left as None (§1.3), in place.

    Each dimension is independent: a value that is already set (explicit flag)
    is kept as is; only the unset ones follow the scaling rule.
    """
    batch = config.batch_size
    scale = batch // REFERENCE_BATCH
    given_minibatches = config.num_minibatches
    given_epochs = config.update_epochs
    before = {
        "num_minibatches": given_minibatches or REFERENCE_MINIBATCHES,
        "update_epochs": given_epochs or REFERENCE_EPOCHS,
    }
    before["minibatch_size"] = batch // before["num_minibatches"]
    before["gradient_steps"] = before["num_minibatches"] * before["update_epochs"]

    if batch <= REFERENCE_BATCH:
        scaled_minibatches, scaled_epochs = REFERENCE_MINIBATCHES, REFERENCE_EPOCHS
    else:
        scaled_minibatches = min(REFERENCE_MINIBATCHES * scale, MAX_MINIBATCHES)
        scaled_epochs = max(MIN_SCALED_EPOCHS, REFERENCE_EPOCHS // scale)
    minibatches = scaled_minibatches if given_minibatches is None else given_minibatches
    epochs = scaled_epochs if given_epochs is None else given_epochs
    config.num_minibatches, config.update_epochs = minibatches, epochs

    after = {
        "num_minibatches": minibatches,
        "update_epochs": epochs,
        "minibatch_size": config.minibatch_size,
        "gradient_steps": config.gradient_steps,
    }
    return AutoScaleReport(
        batch_size=batch,
        scale=max(scale, 1),
        before=before,
        after=after,
        lr_hint=LR_STEPS_PRODUCT / config.gradient_steps,
    )


def apply_device_tuning(
    config: TrainConfig, device_type: str, device_count: int, explicit: set[str]
) -> list[str]:
    """`--auto-tune` (§1.4): adjust for the device *before* auto-scaling.

    Only settings the user did not give explicitly are touched. Returns a list
    of human-readable changes.
    """
    changes: list[str] = []
    if device_type == "CPU":
        if "num_envs" not in explicit and config.num_envs > 64:
            changes.append(f"num_envs {config.num_envs} -> 64 (CPU)")
            config.num_envs = 64
        if "num_minibatches" not in explicit:
            current = config.num_minibatches or REFERENCE_MINIBATCHES
            if current > 2:
                changes.append(f"num_minibatches {current} -> 2 (CPU)")
                config.num_minibatches = 2
    elif device_type == "TPU" and device_count > 1 and "num_envs" not in explicit:
        # Training is data parallel over all local chips, so give each chip
        # the per-device env count; auto-scaling then keeps 8192 minibatches.
        new = config.num_envs * device_count
        changes.append(f"num_envs {config.num_envs} -> {new} ({device_count} TPU chips)")
        config.num_envs = new
    return changes


def validate(config: TrainConfig) -> None:
    """Reject bad settings before anything is compiled (§1.1)."""
    counts = (
        "num_envs",
        "num_steps",
        "total_timesteps",
        "num_minibatches",
        "update_epochs",
        "hidden_dim",
        "num_layers",
        "log_interval",
    )
    for name in counts:
        value = getattr(config, name)
        if value is not None and value <= 0:
            raise ValueError(f"--{name.replace('_', '-')} must be positive, got {value}")
    if config.num_minibatches is not None and config.batch_size % config.num_minibatches:
        raise ValueError(
            f"num_envs x num_steps = {config.batch_size} is not divisible by "
            f"num_minibatches = {config.num_minibatches}"
        )
    for name in ("lr", "gamma", "gae_lambda", "clip_eps", "vf_coef", "ent_coef", "max_grad_norm"):
        value = getattr(config, name)
        if not math.isfinite(value) or value < 0:
            raise ValueError(
                f"--{name.replace('_', '-')} must be a finite non-negative number, got {value}"
            )
    if config.value_target not in VALUE_TARGETS:
        raise ValueError(
            f"--value-target must be {' or '.join(VALUE_TARGETS)}, got {config.value_target!r}"
        )
    check_ent_coef_schedule(config)
    anneal = config.reward_weights_anneal
    if anneal is not None:
        if config.reward_weights is None:
            raise ValueError(
                "--reward-weights-anneal needs --reward-weights (the weights it moves toward 1)"
            )
        if not (math.isfinite(anneal) and 0.0 < anneal <= 1.0):
            raise ValueError(
                f"--reward-weights-anneal must be a fraction of training in (0, 1], got {anneal}"
            )
    if config.reward_weights_final is not None and anneal is None:
        raise ValueError(
            "--reward-weights-final needs --reward-weights-anneal (the schedule that ends there)"
        )
    if config.distance_shaping not in ("canonical", "potential"):
        raise ValueError(
            f"--distance-shaping must be canonical or potential, got {config.distance_shaping!r}"
        )
    if not math.isfinite(config.program_bonus):
        raise ValueError(f"--program-bonus must be a finite number, got {config.program_bonus}")
    if config.program_bonus_at_death not in ("pay", "withhold"):
        raise ValueError(
            "--program-bonus-at-death must be pay or withhold, "
            f"got {config.program_bonus_at_death!r}"
        )
    if config.program_bonus_scale not in PROGRAM_BONUS_SCALES:
        raise ValueError(
            f"--program-bonus-scale must be {' or '.join(PROGRAM_BONUS_SCALES)}, "
            f"got {config.program_bonus_scale!r}"
        )
    if config.program_bonus_scale != "flat" and config.program_bonus == 0:
        raise ValueError("--program-bonus-scale spawn-cost needs a non-zero --program-bonus")
    if config.program_bonus_at_death == "withhold" and config.program_bonus == 0:
        raise ValueError("--program-bonus-at-death withhold needs a non-zero --program-bonus")
    if not math.isfinite(config.program_use_bonus):
        raise ValueError(
            f"--program-use-bonus must be a finite number, got {config.program_use_bonus}"
        )
    if not (math.isfinite(config.ent_coef_programs) and config.ent_coef_programs >= 0):
        raise ValueError(
            f"--ent-coef-programs must be a finite number >= 0, got {config.ent_coef_programs}"
        )
    check_program_levers_delay(config)
    if not isinstance(config.max_episode_steps, int) or config.max_episode_steps < 0:
        raise ValueError(
            "--max-episode-steps must be a whole number of actions >= 0 (0: no limit), "
            f"got {config.max_episode_steps!r}"
        )
    curriculum_flags.resolve(config)  # raises on a bad --curriculum* value


def parse_reward_weights(text: str, flag: str = "--reward-weights") -> dict[str, float]:
    """`--reward-weights "kills=2,step_penalty=0"` -> {"kills": 2.0, "step_penalty": 0.0}.

    Only the syntax is checked here (the names are checked against the game
    module's component list by `check_reward_weight_names`).
    """
    weights: dict[str, float] = {}
    for item in text.split(","):
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not name or not value:
            raise ValueError(
                f"{flag}: expected name=weight pairs separated by commas, "
                f"got {item.strip()!r} in {text!r}"
            )
        try:
            weight = float(value)
        except ValueError:
            raise ValueError(f"{flag}: weight of {name!r} is not a number: {value!r}") from None
        if not math.isfinite(weight):
            raise ValueError(f"{flag}: weight of {name!r} must be finite, got {value!r}")
        if name in weights:
            raise ValueError(f"{flag}: {name!r} is given twice")
        weights[name] = weight
    return weights


def check_reward_weight_names(
    weights: dict[str, float] | None, valid_names: Sequence[str], flag: str = "--reward-weights"
) -> None:
    """Reject weights for components the game does not report, listing the valid names."""
    if weights is None:
        return
    unknown = [name for name in weights if name not in valid_names]
    if unknown:
        raise ValueError(
            f"{flag}: unknown reward component(s) {', '.join(unknown)}; "
            f"valid names: {', '.join(valid_names)}"
        )


def format_reward_weights(weights: dict[str, float] | None) -> str:
    return "none" if weights is None else ",".join(f"{k}={v:g}" for k, v in weights.items())


def enforce_minimum_budget(config: TrainConfig) -> str | None:
    """The original's guard: at least three updates. Returns a warning or None."""
    minimum = 3 * config.batch_size
    if config.total_timesteps < minimum:
        old = config.total_timesteps
        config.total_timesteps = minimum
        return (
            f"total_timesteps {old:,} is below three updates; "
            f"raised to {minimum:,} (3 x batch of {config.batch_size:,})"
        )
    return None


# ---------------------------------------------------------------- command line


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        allow_abbrev=False, description="Masked PPO (PureJaxRL style) on the HackMatrix JAX engine."
    )
    g = p.add_argument_group("rollout and budget")
    g.add_argument("--num-envs", type=int, default=256)
    g.add_argument("--num-steps", type=int, default=128)
    g.add_argument("--total-timesteps", type=int, default=10_000_000)

    g = p.add_argument_group("PPO")
    g.add_argument("--lr", "--learning-rate", dest="lr", type=float, default=2.5e-4)
    g.add_argument("--gamma", type=float, default=0.99)
    g.add_argument("--gae-lambda", type=float, default=0.95)
    g.add_argument(
        "--num-minibatches",
        type=int,
        default=None,
        help="default 4, auto-scaled for large batches unless given",
    )
    g.add_argument(
        "--update-epochs",
        type=int,
        default=None,
        help="default 4, auto-scaled (floor 2) for large batches unless given",
    )
    g.add_argument("--clip-eps", type=float, default=0.2)
    g.add_argument("--vf-coef", type=float, default=0.5)
    g.add_argument(
        "--value-target",
        default="raw",
        metavar="|".join(VALUE_TARGETS),
        help="the scale the value head learns on: raw (the return) or symlog "
        "(sign(x) ln(1+|x|) of it, so large stage and win returns do not swamp the loss)",
    )
    g.add_argument("--ent-coef", type=float, default=0.15)
    g.add_argument(
        "--ent-coef-final",
        type=float,
        default=None,
        metavar="C",
        help="the entropy coefficient --ent-coef-anneal ends at (e.g. start at 0.15 to keep "
        "early exploration, end at 0.05); default: --ent-coef throughout (training.md §1.1)",
    )
    g.add_argument(
        "--ent-coef-anneal",
        type=float,
        default=None,
        metavar="F",
        help="move the entropy coefficient linearly from --ent-coef to --ent-coef-final over "
        "the first F of the updates, then hold it there (training.md §1.1)",
    )
    g.add_argument(
        "--ent-coef-programs",
        type=float,
        default=0.0,
        metavar="C",
        help="an extra entropy bonus, C x the entropy of 'run a program or not' on the steps "
        "where both are valid; a program lever (--program-levers-from-update delays it); "
        "default 0: off (training.md §1.1)",
    )
    g.add_argument("--max-grad-norm", type=float, default=0.5)
    g.add_argument(
        "--reward-weights",
        type=_reward_weights_arg,
        default=None,
        metavar="NAME=W,...",
        help="train on sum_i w_i x reward component i (w_i = 1 for components not "
        "named); 'none' or no flag: the env's reward unchanged (training.md §1.1)",
    )
    g.add_argument(
        "--reward-weights-anneal",
        type=float,
        default=None,
        metavar="F",
        help="move every --reward-weights weight linearly to 1 (the canonical reward; or to "
        "--reward-weights-final) over the first F of the updates, then hold it there; "
        "default: keep the weights for the whole run (training.md §1.1)",
    )
    g.add_argument(
        "--reward-weights-final",
        type=_final_reward_weights_arg,
        default=None,
        metavar="NAME=W,...",
        help="the weights --reward-weights-anneal ends at instead of 1 (w = 1 for components "
        "not named), e.g. a siphon price that starts light and ends at 0.3 (training.md §1.1)",
    )
    g.add_argument(
        "--distance-shaping",
        choices=("canonical", "potential"),
        default="canonical",
        help="canonical: the env's one-directional distance shaping (a step away costs "
        "nothing, so stepping away and back pays); potential: also charge 0.05 per cell "
        "lost, so a loop earns nothing (training.md §1.1)",
    )
    g.add_argument(
        "--program-bonus",
        type=float,
        default=0.0,
        metavar="W",
        help="add W x (programs owned after a step - before it) to the reward PPO trains "
        "on, paying for a program taken into hand by a siphon; default 0: off (training.md §1.1)",
    )
    g.add_argument(
        "--program-bonus-scale",
        choices=PROGRAM_BONUS_SCALES,
        default="flat",
        help="flat: every program taken pays --program-bonus; spawn-cost: a program pays "
        "--program-bonus x the transmissions its block queues (game-rules §1.6), so with "
        "0.5 a program block pays per transmission what a data block's score pays "
        "(training.md §1.1)",
    )
    g.add_argument(
        "--program-bonus-at-death",
        choices=("pay", "withhold"),
        default="pay",
        help="pay: a program taken on the step the player dies earns --program-bonus like "
        "any other; withhold: it earns nothing, since it can never be run (training.md §1.1)",
    )
    g.add_argument(
        "--program-use-bonus",
        type=float,
        default=0.0,
        metavar="W",
        help="add W to the reward PPO trains on at the first program an episode runs "
        "(once per episode); default 0: off (training.md §1.1)",
    )
    g.add_argument(
        "--free-program-spending",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="refund the resource_gain charge for credits and energy a program spends, and "
        "pay nothing for an UNDO that gives them back (training.md §1.1); default: off",
    )
    g.add_argument(
        "--siphon-pay-on-use",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="pay data_siphon's 1.0 when a data siphon is spent by the siphon action instead "
        "of when it is picked up (an UNDO that gives siphons back takes it back), so a "
        "siphon held and never spent earns nothing (training.md §1.1); default: off",
    )
    g.add_argument(
        "--program-levers-from-update",
        type=int,
        default=0,
        metavar="N",
        help="--program-bonus, --program-use-bonus and --free-program-spending pay nothing "
        "before update N, so the agent learns the rest of the game first; default 0: "
        "from the start (training.md §1.1)",
    )
    g.add_argument(
        "--max-episode-steps",
        type=int,
        default=0,
        metavar="N",
        help="end a training episode after N actions (a time-limit truncation: PPO "
        "bootstraps from the value of its last observation and a fresh game starts); "
        "default 0: no limit, as in the game (training.md §2.5)",
    )

    g = p.add_argument_group("curriculum starts (training.md §1.7)")
    g.add_argument(
        "--curriculum",
        default=None,
        choices=tuple(curriculum_flags.PRESETS),
        help="a named curriculum; the --curriculum-* flags below override its fields",
    )
    g.add_argument(
        "--curriculum-stages",
        default=None,
        metavar="S:W,...",
        help="weights of the starting stages 1..8, e.g. 1:0.5,2:0.1,8:0.4 (default 1:1)",
    )
    for flag, what in (
        ("programs", "programs owned at a curriculum start: a count uniform in A..B (23: all)"),
        ("credits", "credits added to the starting bonus, uniform in A..B"),
        ("energy", "energy added to the starting bonus, uniform in A..B"),
        ("data-siphons", "data siphons added to the starting bonus, uniform in A..B"),
        (
            "transmissions",
            "siphon transmissions pending at a curriculum start, uniform in A..B (at most 35): "
            "they appear after the first turn, so the agent meets siphon-spawned enemies "
            "without siphoning",
        ),
    ):
        g.add_argument(f"--curriculum-{flag}", default=None, metavar="A-B", help=what)
    g.add_argument(
        "--curriculum-p0",
        type=float,
        default=1.0,
        help="chance that a reset is a curriculum start (at the start of training)",
    )
    g.add_argument(
        "--curriculum-anneal",
        type=float,
        default=None,
        metavar="FRACTION",
        help="the chance falls linearly from p0 to 0 by this fraction of training "
        "(default: p0 throughout)",
    )

    g = p.add_argument_group("network")
    g.add_argument("--hidden-dim", type=int, default=256)
    g.add_argument("--num-layers", type=int, default=2)
    g.add_argument(
        "--network",
        choices=("mlp", "grid"),
        default="mlp",
        help="mlp: Dense layers on the flat observation; grid: a per-cell encoder and 3x3 "
        "convolutions over the 6x6 board, then the trunk (training.md §2.3)",
    )
    g.add_argument(
        "--bf16",
        action="store_true",
        help="bfloat16 network compute; params and Adam state stay float32",
    )

    g = p.add_argument_group("logging")
    g.add_argument(
        "--log-interval", type=int, default=10, help="updates per log line and per compiled chunk"
    )
    g.add_argument(
        "--console",
        choices=("brief", "full"),
        default="brief",
        help="per chunk: one short line (brief), or the line plus every metric "
        "grouped by prefix (full); metrics.jsonl always has every metric",
    )
    g.add_argument("--no-wandb", action="store_true")
    g.add_argument("--wandb", action="store_true", help="no-op: W&B is on by default")
    g.add_argument("--project", default="hackmatrix")
    g.add_argument("--entity", default=None, help="W&B entity (default: your default entity)")
    g.add_argument("--run-name", default=None)
    g.add_argument("--run-suffix", default=None)

    g = p.add_argument_group("checkpoints")
    g.add_argument("--save-interval-minutes", type=float, default=10.0)
    g.add_argument(
        "--save-interval",
        type=int,
        default=None,
        help="save every N updates (turns the time-based period off)",
    )
    g.add_argument("--checkpoint-dir", default="checkpoints")
    g.add_argument(
        "--keep-checkpoints",
        type=_non_negative_int,
        default=0,
        metavar="N",
        help="after each save, delete all but the N newest checkpoint_*.pkl of the run "
        "(params_*.npz stay); 0 keeps every one (default). A checkpoint holds the env "
        "batch: 45 MB at 2,048 envs (training.md §4.2)",
    )
    g.add_argument("--no-artifact", action="store_true")
    g.add_argument(
        "--no-episode-gif",
        action="store_true",
        help="do not play one greedy episode at each checkpoint and save it as "
        "episode_{update}.gif in the run directory (and to W&B)",
    )
    g.add_argument(
        "--eval-episodes",
        type=_non_negative_int,
        default=256,
        help="games of the behaviour evaluation played at each checkpoint, logged as "
        "eval/* (training.md §9.5); 0 turns it off (default 256)",
    )
    g.add_argument(
        "--eval-policy",
        choices=("greedy", "sample"),
        default="greedy",
        help="how the checkpoint evaluation picks actions (default greedy)",
    )

    g = p.add_argument_group("resume and other")
    g.add_argument(
        "--resume",
        nargs="?",
        const=RESUME_LATEST,
        default=None,
        help="checkpoint .pkl, run directory or run name; bare: the latest run",
    )
    g.add_argument("--resume-run", default=None, help="run name or 8-hex W&B id to resume")
    g.add_argument("--rewind", action="store_true")
    g.add_argument(
        "--reset-optimizer",
        action="store_true",
        help="on resume keep the weights but start Adam fresh",
    )
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--auto-tune", action="store_true")
    g.add_argument(
        "--env-module",
        default="hackmatrix.jax_env",
        help="import path of the game module (a jax_env-compatible stand-in for tests)",
    )
    g.add_argument(
        "--multi-host",
        action="store_true",
        help="call jax.distributed.initialize() and train over every process's devices "
        "(implied by the three flags below; see training-guide.md, Multi-host)",
    )
    g.add_argument(
        "--coordinator-address",
        default=None,
        metavar="HOST:PORT",
        help="process 0's address (default $JAX_COORDINATOR_ADDRESS, else detected "
        "on a TPU pod / SLURM / Open MPI)",
    )
    g.add_argument(
        "--num-processes",
        type=int,
        default=None,
        help="processes in the run (default $JAX_NUM_PROCESSES, else detected)",
    )
    g.add_argument(
        "--process-id",
        type=int,
        default=None,
        help="this process's index, 0 writes the files (default $JAX_PROCESS_ID, else detected)",
    )
    g.add_argument(
        "--distributed-timeout",
        type=int,
        default=300,
        metavar="SECONDS",
        help="multi-host: how long to wait for every process to join, and how soon a "
        "process whose peer stopped answering exits with an error",
    )
    return p


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _reward_weights_arg(text: str, flag: str = "--reward-weights") -> dict[str, float] | None:
    if text.strip().lower() == "none":  # the env's reward as is, e.g. over a train.sh default
        return None
    try:
        return parse_reward_weights(text, flag)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _final_reward_weights_arg(text: str) -> dict[str, float] | None:
    return _reward_weights_arg(text, "--reward-weights-final")


CONFIG_FLAGS = tuple(f.name for f in dataclasses.fields(TrainConfig))


def explicit_flags(argv: Sequence[str]) -> set[str]:
    """Destinations (config field names) of the flags given on the command line."""
    parser = build_parser()
    for action in parser._actions:  # argparse has no public way to suppress defaults
        action.default = argparse.SUPPRESS
    return set(vars(parser.parse_args(list(argv))))


def check_ent_coef_schedule(config: TrainConfig) -> None:
    """`--ent-coef-final` and `--ent-coef-anneal` come together, with sane values."""
    final, anneal = config.ent_coef_final, config.ent_coef_anneal
    if (final is None) != (anneal is None):
        given, missing = (
            ("--ent-coef-final", "--ent-coef-anneal")
            if anneal is None
            else ("--ent-coef-anneal", "--ent-coef-final")
        )
        raise ValueError(f"{given} needs {missing} (the schedule is the pair)")
    if final is not None and (not math.isfinite(final) or final < 0):
        raise ValueError(f"--ent-coef-final must be a finite non-negative number, got {final}")
    if anneal is not None and not (math.isfinite(anneal) and 0.0 < anneal <= 1.0):
        raise ValueError(
            f"--ent-coef-anneal must be a fraction of training in (0, 1], got {anneal}"
        )


def check_program_levers_delay(config: TrainConfig) -> None:
    """`--program-levers-from-update N`: a whole N >= 0, with a lever to delay. N may lie
    past the run's end (the run is then the first part of a staged one; see
    `program_levers_note`)."""
    delay = config.program_levers_from_update
    if not isinstance(delay, int) or delay < 0:
        raise ValueError(
            f"--program-levers-from-update must be a whole update number >= 0, got {delay!r}"
        )
    if delay == 0:
        return
    levers = (
        config.program_bonus,
        config.program_use_bonus,
        config.free_program_spending,
        config.ent_coef_programs,
    )
    if not any(levers):
        raise ValueError(
            "--program-levers-from-update has nothing to delay: give --program-bonus, "
            "--program-use-bonus, --free-program-spending or --ent-coef-programs"
        )


def program_levers_note(config: TrainConfig) -> str | None:
    """The start-up note for a run that ends before its program levers come in."""
    delay = config.program_levers_from_update
    if delay == 0 or delay < config.num_updates:
        return None
    return (
        f"Note: the program levers pay from update {delay}, after this run's last update "
        f"({config.num_updates}): they pay nothing here unless a resume extends the run"
    )


# The batch the staged default's delay was measured at (learning.md §19-20): 256 envs x 128.
STAGED_DELAY_BATCH = 256 * 128


def program_levers_batch_note(config: TrainConfig) -> str | None:
    """The start-up note for a delay counted in updates of another batch than it was
    measured at: the same N is then a different number of env steps."""
    delay = config.program_levers_from_update
    if delay == 0 or config.batch_size == STAGED_DELAY_BATCH:
        return None
    here, measured = delay * config.batch_size, delay * STAGED_DELAY_BATCH
    return (
        f"Note: the program levers come in at update {delay}, {format_count(here)} env steps "
        f"at this batch ({config.num_envs} envs x {config.num_steps} steps); the staged "
        f"reward was measured at 256 x 128, where update {delay} is "
        f"{format_count(measured)} steps (specs/learning.md §20.1)"
    )


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    return TrainConfig(**{name: getattr(args, name) for name in CONFIG_FLAGS})


def format_count(n: int) -> str:
    for suffix, size in (("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if n >= size:
            value = n / size
            return f"{value:g}{suffix}" if value == int(value) else f"{value:.2f}{suffix}"
    return str(n)
