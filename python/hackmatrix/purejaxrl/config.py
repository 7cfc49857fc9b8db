"""Trainer configuration: every option's declaration, derived sizes and batch auto-scaling.

`TrainConfig` is the training recipe (stored in every checkpoint), `RunOptions` how and
where this process runs (not stored). Each field declares its option (`options.option`):
section, help, flag and parser. The command line (`build_parser`), the preset checks
(`presets.py`), the layering of defaults, preset, checkpoint and command line
(`resolve.py`) and the flag reference (`docs/reference/trainer-flags.md`) are made from
these declarations (training.md §1, specs/decisions.md T-16).

Everything here is plain Python (no JAX), so the config can be parsed, checked and
printed before any compilation starts.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from . import curriculum_flags
from .options import Declared, build_parser_for, declared, display, explicit_values, option

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
# `--restart-advantages`: how PPO normalises a minibatch's advantages when games restart.
RESTART_ADVANTAGES = ("together", "apart")
# `--value-target`: the scale the value head learns on (training.md §2.6, value_target.py).
VALUE_TARGETS = ("raw", "symlog")
# `--value-trunk`: the value head reads the policy's trunk, or a copy of its own (grid only),
# or its own beside the policy's read through a stop-gradient (grid only).
READS_POLICY = "separate-reads-policy"
VALUE_TRUNKS = ("shared", "separate", READS_POLICY)
# The preset a run uses unless `--preset` names another (presets/default.toml).
DEFAULT_PRESET = "default"
# `--algorithm`: how the network learns (training.md §2, §2.10).
ALGORITHMS = ("ppo", "expert-iteration")
EXPERT_ITERATION = "expert-iteration"
# The actions a search's root can consider (the game's 28).
SEARCH_ACTIONS = 28
# `--search-tree-reward`: what the search's tree adds up (specs/search.md §3.4).
SEARCH_TREE_REWARDS = ("trained", "env", "trained-unweighted")
# `--search-policy-target`: what expert iteration's policy learns from each search
# (training.md §2.10).
SEARCH_POLICY_TARGETS = ("improved", "argmax", "advantage")
# `--search-advantage-actions`: which actions the advantage target moves (training.md §2.10).
SEARCH_ADVANTAGE_ACTIONS = ("all", "moves")
# `--search-select`: which envs a partial search (`--search-share` below 1) labels each step.
SEARCH_SELECTS = ("first", "furthest", "split")
# `--search-acting`: whose move the env plays in expert iteration (training.md §2.10).
SEARCH_ACTINGS = ("search", "network")


# ------------------------------------------------------------- value parsers


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


def non_negative_int(text: str) -> int:
    """argparse type: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _reward_weights_arg(text: str, flag: str = "--reward-weights") -> dict[str, float] | None:
    if text.strip().lower() == "none":  # the env's reward as is, e.g. over a preset's weights
        return None
    try:
        return parse_reward_weights(text, flag)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _final_reward_weights_arg(text: str) -> dict[str, float] | None:
    return _reward_weights_arg(text, "--reward-weights-final")


def _positive_minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of minutes, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of minutes, got {text}")
    return value


def format_count(n: int) -> str:
    for suffix, size in (("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if n >= size:
            value = n / size
            return f"{value:g}{suffix}" if value == int(value) else f"{value:.2f}{suffix}"
    return str(n)


def format_reward_weights(weights: dict[str, float] | None) -> str:
    return "none" if weights is None else ",".join(f"{k}={v:g}" for k, v in weights.items())


def _off_when(empty: Any, word: str = "off") -> Any:
    """A `show` that names the option's off value: "off" for None, "0 (off)" for 0."""

    def show(value: Any) -> str:
        if value != empty:
            return display(value)
        return word if empty is None else f"{display(empty)} ({word})"

    return show


# ------------------------------------------------------------- the training recipe


@dataclasses.dataclass
class TrainConfig:
    """The training recipe: every setting that changes what is trained, stored in each
    checkpoint (a flat dict) and taken from it on a resume unless flagged (§4.4).
    `None` for minibatches/epochs means "auto-scale"."""

    # -- rollout, budget and seed
    num_envs: int = option(
        256,
        section="rollout",
        help="environments stepped in parallel by vmap; an update uses num_envs x num_steps "
        "transitions (2,048 keeps an accelerator busy, 64 suits a CPU)",
    )
    num_steps: int = option(128, section="rollout", help="steps each environment takes per rollout")
    total_timesteps: int = option(
        10_000_000,
        section="rollout",
        help="the run's env-step budget and, on a resume, its total target: num_updates = "
        "total_timesteps // (num_envs x num_steps); raised to three updates if below",
        show=lambda value: format_count(value),
    )
    max_episode_steps: int = option(
        0,
        section="rollout",
        metavar="N",
        help="end a training episode after N actions (a time-limit truncation: PPO "
        "bootstraps from the value of its last observation and a fresh game starts); "
        "0: no limit, as in the game (training.md §2.5)",
        label="episode step limit",
        show=_off_when(0),
    )
    seed: int = option(0, section="rollout", help="seed of the root PRNG key")

    # -- algorithm (expert_iteration.py)
    algorithm: str = option(
        "ppo",
        section="algorithm",
        choices=ALGORITHMS,
        help="ppo: masked PPO (training.md §2); expert-iteration: every env step is a "
        "Gumbel MuZero search over the JAX engine from a fair root, the env plays the "
        "search's action and the policy learns the search's improved policy (training.md "
        "§2.10); a resume may switch, and a checkpoint from before the flag is ppo",
    )
    search_simulations: int = option(
        8,
        section="algorithm",
        metavar="N",
        help="expert iteration: simulations of each step's search (its cost grows with N)",
        label="search simulations",
    )
    search_considered: int = option(
        16,
        section="algorithm",
        metavar="K",
        help="expert iteration: root actions the search's sequential halving starts from "
        f"(1..{SEARCH_ACTIONS})",
        label="search's considered actions",
    )
    search_gumbel_scale: float = option(
        1.0,
        section="algorithm",
        metavar="S",
        help="expert iteration: the Gumbel noise at the search's root, its exploration "
        "(0: the top prior actions, no noise)",
        label="search's Gumbel scale",
    )
    search_c_scale: float = option(
        0.1,
        section="algorithm",
        metavar="C",
        help="expert iteration: the improved policy's step, Gumbel MuZero's c_scale (mctx's "
        "value_scale; > 0): smaller keeps the targets nearer the network's policy",
        label="search's c_scale",
    )
    search_tree_reward: str = option(
        "env",
        section="algorithm",
        choices=SEARCH_TREE_REWARDS,
        help="expert iteration: the reward the search's tree adds; env: the game's own (the "
        "runs of specs/experiments/43, whose tree and value disagreed on siphons); trained: "
        "the run's shaped reward, the one its value head learns (specs/search.md §3.4; the "
        "expert-iteration preset's); trained-unweighted: the same without its component "
        "weights, so a penalty the run weighs down costs its game price in the tree",
        label="search's tree reward",
    )
    search_policy_target: str = option(
        "improved",
        section="algorithm",
        choices=SEARCH_POLICY_TARGETS,
        help="expert iteration: what the policy learns from each step's search; improved: "
        "its improved policy (Gumbel AlphaZero); argmax: the move it would play, one-hot (the "
        "argmax of the improved policy, the play tools' searched move: imitation of the "
        "searched player); advantage: no label, the search's Q of each action less its "
        "value as advantages in PPO's clipped surrogate over every legal action (probabilities "
        "move by what the search measured, as far as --clip-eps lets one update move them)",
        label="search's policy target",
    )
    search_advantage_actions: str = option(
        "all",
        section="algorithm",
        choices=SEARCH_ADVANTAGE_ACTIONS,
        help="expert iteration, with --search-policy-target advantage: the actions the "
        "search's advantages move; all: every legal action; moves: the four moves only, "
        "through the policy conditioned on moving, so the search says which way to move and "
        "PPO's term alone decides when to siphon or run a program",
        label="search's advantage actions",
    )
    search_acting: str = option(
        "search",
        section="algorithm",
        choices=SEARCH_ACTINGS,
        help="expert iteration: whose move the env plays; search: the search's (its "
        "Gumbel sequential-halving action); network: a sample of the network's masked "
        "policy, the search only labelling the states the network reaches (DAgger)",
        label="expert iteration's acting",
    )
    search_share: float = option(
        1.0,
        section="algorithm",
        metavar="F",
        help="expert iteration: the share of envs whose states the search labels each step "
        "(the first ceil(F x envs); in (0, 1]); below 1 the network acts everywhere "
        "(--search-acting network) and the unsearched envs learn from --search-ppo-coef's "
        "term alone",
        label="searched share of envs",
    )
    search_select: str = option(
        "first",
        section="algorithm",
        choices=SEARCH_SELECTS,
        help="expert iteration, with --search-share below 1: which envs the search labels "
        "each step; first: the first ceil(F x envs), the same games every step; furthest: "
        "the ceil(F x envs) games on the highest stages at that step (ties drawn at random "
        "from the step's key), so the search's signal goes where the agent loses its games; "
        "split: the furthest half of that count (rounded up), the rest drawn uniformly from "
        "the other games",
        label="searched envs",
    )
    search_select_from_update: int = option(
        0,
        section="algorithm",
        metavar="N",
        help="expert iteration: --search-select picks the searched envs from update N on; "
        "before it the first ceil(F x envs) are searched, as with first (a run of first "
        "resumed at N with --search-select, in one run); 0: from the start",
        label="searched envs selected from update",
        show=_off_when(0, "from the start"),
    )
    search_ppo_coef: float = option(
        0.0,
        section="algorithm",
        metavar="W",
        help="expert iteration: the weight of PPO's clipped surrogate on the network's own "
        "moves beside the cross-entropy to the search's targets (needs --search-acting "
        "network; 0: the targets alone): PPO that also distils the search",
        label="PPO term's weight",
    )
    search_min_q_gap: float = option(
        0.0,
        section="algorithm",
        metavar="G",
        help="expert iteration: keep a searched state's label only where the search is "
        "confident, its move's Q above the network's greedy move's Q by at least G (return "
        "units); elsewhere the state learns nothing from the search (PPO's term alone, with "
        "--search-ppo-coef). 0: every searched state is labelled",
        label="search's minimum Q-gap",
    )
    search_keep_agreeing: bool = option(
        False,
        section="algorithm",
        action="switch",
        help="expert iteration, with --search-min-q-gap: keep the labels where the search's "
        "move is the network's greedy move too, so the gate filters only the search's "
        "disagreements (without it an agreeing state is never labelled)",
        label="gate keeps agreeing labels",
    )

    # -- PPO
    lr: float = option(
        2.5e-4,
        section="ppo",
        flags=("--lr", "--learning-rate"),
        help="Adam learning rate, constant; for large batches keep lr x gradient_steps near "
        "4e-3 (the start-up hint, training.md §1.5)",
        label="learning rate",
    )
    gamma: float = option(0.99, section="ppo", help="discount factor", label="discount")
    gae_lambda: float = option(0.95, section="ppo", help="GAE lambda")
    num_minibatches: int | None = option(
        None,
        section="ppo",
        help="minibatches per epoch; unset: 4, auto-scaled for large batches (training.md §1.3)",
        from_checkpoint=False,
        label="minibatches per epoch",
        show=lambda value: "auto" if value is None else display(value),
    )
    update_epochs: int | None = option(
        None,
        section="ppo",
        help="passes over each batch; unset: 4, auto-scaled (floor 2) for large batches",
        from_checkpoint=False,
        label="epochs per update",
        show=lambda value: "auto" if value is None else display(value),
    )
    clip_eps: float = option(0.2, section="ppo", help="PPO ratio clip epsilon")
    vf_coef: float = option(
        0.5, section="ppo", help="weight of the value loss", label="value-loss coefficient"
    )
    value_warmup_updates: int = option(
        0,
        section="ppo",
        metavar="N",
        help="the first N updates move the value head's own layer only (the rest of the "
        "network stays as it is, while the optimizer sees every gradient), so a head that "
        "learned another scale or another reward refits before the policy trains on its "
        "advantages; 0: off",
        label="value-head warm-up updates",
        show=_off_when(0),
    )
    ent_coef: float = option(
        0.15,
        section="ppo",
        help="weight of the entropy bonus over the 28 actions",
        label="entropy coefficient",
    )
    ent_coef_final: float | None = option(
        None,
        section="ppo",
        metavar="C",
        help="the entropy coefficient --ent-coef-anneal ends at (e.g. start at 0.15 to keep "
        "early exploration, end at 0.05); unset: --ent-coef throughout (training.md §1.1)",
        label="final entropy coefficient",
        show=_off_when(None),
    )
    ent_coef_anneal: float | None = option(
        None,
        section="ppo",
        metavar="F",
        help="move the entropy coefficient linearly from --ent-coef to --ent-coef-final over "
        "the first F of the updates, then hold it there (training.md §1.1)",
        label="entropy coefficient anneal",
        show=_off_when(None),
    )
    max_grad_norm: float = option(
        0.5, section="ppo", help="clip on the global gradient norm", label="gradient clip"
    )

    # -- network and value head
    network: str = option(
        "mlp",
        section="network",
        choices=("mlp", "grid"),
        help="mlp: Dense layers on the flat observation; grid: a per-cell encoder and 3x3 "
        "convolutions over the 6x6 board, then the trunk (training.md §2.3); a resume "
        "refuses another network than the checkpoint's",
    )
    hidden_dim: int = option(
        256, section="network", help="width of each hidden layer of the shared trunk"
    )
    num_layers: int = option(2, section="network", help="hidden layers of the shared trunk")
    value_trunk: str = option(
        "shared",
        section="network",
        choices=VALUE_TRUNKS,
        help="shared: the value head reads the policy's trunk; separate (grid only): the value "
        "head reads a copy of every layer of its own, so neither loss moves the other's "
        "features (twice the forward cost; --init-from a shared checkpoint copies its trunk); "
        "separate-reads-policy (grid only): as separate, and the value head also reads the "
        "policy trunk's output through a stop-gradient (--init-from a separate checkpoint "
        "starts that reading at zero); a resume refuses another value trunk than the "
        "checkpoint's",
    )
    value_target: str = option(
        "raw",
        section="network",
        choices=VALUE_TARGETS,
        parser_checks_choices=False,  # validate() refuses others, naming the flag
        metavar="|".join(VALUE_TARGETS),
        help="the scale the value head learns on: raw (the return) or symlog "
        "(sign(x) ln(1+|x|) of it, so large stage and win returns do not swamp the loss)",
        label="value target (the head relearns its scale)",
    )
    bf16: bool = option(
        False,
        section="network",
        action="switch",
        help="bfloat16 network compute; params and Adam state stay float32",
    )

    # -- reward shaping (the order of REWARD_FIELDS before the options became declarations)
    reward_weights: dict[str, float] | None = option(
        None,
        section="reward",
        parse=_reward_weights_arg,
        metavar="NAME=W,...",
        help="train on sum_i w_i x reward component i (w_i = 1 for components not "
        "named); 'none': the env's reward unchanged (training.md §1.1)",
        label="reward weights",
        plural=True,
    )
    reward_weights_anneal: float | None = option(
        None,
        section="reward",
        metavar="F",
        help="move every --reward-weights weight linearly to 1 (the canonical reward; or to "
        "--reward-weights-final) over the first F of the updates, then hold it there; "
        "unset: keep the weights for the whole run (training.md §1.1)",
        label="reward weights anneal",
        show=_off_when(None),
    )
    reward_weights_final: dict[str, float] | None = option(
        None,
        section="reward",
        parse=_final_reward_weights_arg,
        metavar="NAME=W,...",
        help="the weights --reward-weights-anneal ends at instead of 1 (w = 1 for components "
        "not named), e.g. a siphon price that starts light and ends at 0.3 (training.md §1.1)",
        label="final reward weights",
        plural=True,
    )
    program_bonus: float = option(
        0.0,
        section="reward",
        metavar="W",
        help="add W x (programs owned after a step - before it) to the reward PPO trains "
        "on, paying for a program taken into hand by a siphon; 0: off (training.md §1.1)",
        label="program bonus",
    )
    program_bonus_scale: str = option(
        "flat",
        section="reward",
        choices=PROGRAM_BONUS_SCALES,
        help="flat: every program taken pays --program-bonus; spawn-cost: a program pays "
        "--program-bonus x the transmissions its block queues (game-rules §1.6), so with "
        "0.5 a program block pays per transmission what a data block's score pays "
        "(training.md §1.1)",
        label="program bonus scale",
    )
    program_bonus_at_death: str = option(
        "pay",
        section="reward",
        choices=("pay", "withhold"),
        help="pay: a program taken on the step the player dies earns --program-bonus like "
        "any other; withhold: it earns nothing, since it can never be run (training.md §1.1)",
        label="program bonus at death",
    )
    program_use_bonus: float = option(
        0.0,
        section="reward",
        metavar="W",
        help="add W to the reward PPO trains on at the first program an episode runs "
        "(once per episode); 0: off (training.md §1.1)",
        label="program use bonus",
    )
    free_program_spending: bool = option(
        False,
        section="reward",
        action="switch",
        help="refund the resource_gain charge for credits and energy a program spends, and "
        "pay nothing for an UNDO that gives them back (training.md §1.1)",
        label="free program spending",
    )
    siphon_pay_on_use: bool = option(
        False,
        section="reward",
        action="switch",
        help="pay data_siphon's 1.0 when a data siphon is spent by the siphon action instead "
        "of when it is picked up (an UNDO that gives siphons back takes it back), so a "
        "siphon held and never spent earns nothing (training.md §1.1)",
        label="siphon pay on use",
    )
    ent_coef_programs: float = option(
        0.0,
        section="reward",
        metavar="C",
        help="an extra entropy bonus, C x the entropy of 'run a program or not' on the steps "
        "where both are valid; a program lever (--program-levers-from-update delays it); "
        "0: off (training.md §1.1)",
        label="program-choice entropy coefficient",
        show=_off_when(0),
    )
    program_levers_from_update: int = option(
        0,
        section="reward",
        metavar="N",
        help="--program-bonus, --program-use-bonus, --free-program-spending and "
        "--ent-coef-programs pay nothing before update N, so the agent learns the rest of "
        "the game first; 0: from the start (training.md §1.1)",
        label="program levers' first update",
        show=_off_when(0, "from the start"),
    )
    distance_shaping: str = option(
        "canonical",
        section="reward",
        choices=("canonical", "potential"),
        help="canonical: the env's one-directional distance shaping (a step away costs "
        "nothing, so stepping away and back pays); potential: also charge 0.05 per cell "
        "lost, so a loop earns nothing (training.md §1.1)",
        label="distance shaping",
    )

    # -- curriculum starts (curriculum_flags.py); all unset: canonical starts only
    curriculum: str | None = option(
        None,
        section="curriculum",
        choices=tuple(curriculum_flags.PRESETS),
        help="a named curriculum: mixed (every stage, some programs and resources), "
        "programs (stage 1 holding programs and the means to run them) or late (stages "
        "5-8 with a full kit); the --curriculum-* flags below override its fields",
    )
    curriculum_stages: str | None = option(
        None,
        section="curriculum",
        metavar="S:W,...",
        help="weights of the starting stages 1..8, e.g. 1:0.5,2:0.1,8:0.4 (unset: 1:1)",
    )
    curriculum_programs: str | None = option(
        None,
        section="curriculum",
        metavar="A-B",
        help="programs owned at a curriculum start: a count uniform in A..B (23: all)",
    )
    curriculum_credits: str | None = option(
        None,
        section="curriculum",
        metavar="A-B",
        help="credits added to the starting bonus, uniform in A..B",
    )
    curriculum_energy: str | None = option(
        None,
        section="curriculum",
        metavar="A-B",
        help="energy added to the starting bonus, uniform in A..B",
    )
    curriculum_data_siphons: str | None = option(
        None,
        section="curriculum",
        metavar="A-B",
        help="data siphons added to the starting bonus, uniform in A..B",
    )
    curriculum_transmissions: str | None = option(
        None,
        section="curriculum",
        metavar="A-B",
        help="siphon transmissions pending at a curriculum start, uniform in A..B (at most "
        "35): they appear after the first turn, so the agent meets siphon-spawned enemies "
        "without siphoning",
    )
    curriculum_p0: float = option(
        1.0,
        section="curriculum",
        help="chance that a reset is a curriculum start (at the start of training)",
    )
    curriculum_anneal: float | None = option(
        None,
        section="curriculum",
        metavar="FRACTION",
        help="the chance falls linearly from p0 to 0 by this fraction of training "
        "(unset: p0 throughout)",
    )
    # -- restarts from the agent's own late states (restarts.py); share 0: off
    restart_share: float = option(
        0.0,
        section="restarts",
        help="chance that a finished game restarts from a state the agent itself reached "
        "at --restart-min-stage or later (its kit and board as it held them, every hidden "
        "field redrawn, a fresh seed) instead of a new game; 0: off (training.md §1.7)",
    )
    restart_min_stage: int = option(
        5,
        section="restarts",
        help="with --restart-share: the stage a live game must have reached for its states "
        "to be remembered (2..8)",
    )
    restart_buffer: int = option(
        1024,
        section="restarts",
        help="with --restart-share: how many remembered states the ring holds (one joins "
        "per env step, the oldest leaves)",
    )
    restart_advantages: str = option(
        "together",
        section="restarts",
        choices=RESTART_ADVANTAGES,
        help="with --restart-share, PPO: how a minibatch's advantages are normalised; "
        "together: over all its steps, as always; apart: the steps of restarted games and "
        "of games that began at a reset each over their own (a restarted game's late-stage "
        "advantages spread ~10x wider and would shrink the early stages' gradient, "
        "specs/experiments/67)",
        label="restart advantages normalised",
    )

    # -- logging
    log_interval: int = option(
        10,
        section="logging",
        help="updates per log line and per compiled chunk (training.md §2.8)",
        label="updates per chunk",
    )

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
    def from_dict(cls, values: Mapping[str, Any]) -> TrainConfig:
        """A stored config (any past version's flat dict): unknown keys are ignored and a
        missing one is its default, the value every option had before it existed."""
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


# ------------------------------------------------------------- how this process runs


@dataclasses.dataclass
class RunOptions:
    """How and where this process runs: logging, checkpoint files, resume, devices. Not
    stored in checkpoints and never changes what is trained."""

    # -- rollout, budget and seed
    time_limit_minutes: float | None = option(
        None,
        section="rollout",
        parse=_positive_minutes,
        metavar="MINUTES",
        help="stop at the end of the first chunk that ends this many minutes after training "
        "started (the first chunk's compile included) and save a final checkpoint, as at the "
        "end of the budget; a resume continues the run (training.md §2.8); unset: no limit",
        show=_off_when(None),
    )

    # -- logging
    console: str = option(
        "brief",
        section="logging",
        choices=("brief", "full"),
        help="per chunk: one short line (brief), or the line plus every metric grouped by "
        "prefix (full); metrics.jsonl always has every metric",
    )
    wandb: bool = option(
        True,
        section="logging",
        action="switch",
        help="log to Weights & Biases (offline without credentials); --no-wandb turns it off",
    )
    project: str = option("hackmatrix", section="logging", help="W&B project")
    entity: str | None = option(
        None, section="logging", help="W&B entity (unset: your default entity)"
    )
    run_name: str | None = option(
        None,
        section="logging",
        in_presets=False,
        help="name of the run directory and the W&B run (unset: hackmatrix-jax-{mon}{dd}-{yy}-N)",
    )
    run_suffix: str | None = option(
        None,
        section="logging",
        in_presets=False,
        help="appended to the run name, e.g. ...-1-bignet",
    )

    # -- checkpoints and their evaluation
    save_interval_minutes: float = option(
        10.0, section="checkpoints", help="save a checkpoint every this many minutes"
    )
    save_interval: int | None = option(
        None,
        section="checkpoints",
        help="save every N updates instead (turns the time-based period off)",
    )
    checkpoint_dir: str = option(
        "checkpoints",
        section="checkpoints",
        help="parent directory: a run writes to CHECKPOINT_DIR/RUN_NAME",
    )
    keep_checkpoints: int = option(
        0,
        section="checkpoints",
        parse=non_negative_int,
        metavar="N",
        help="after each save, delete all but the N newest checkpoint_*.pkl of the run "
        "(params_*.npz stay); 0 keeps every one. A checkpoint holds the env batch: 45 MB "
        "at 2,048 envs (training.md §4.2)",
        show=_off_when(0, "keep all"),
    )
    artifact: bool = option(
        True,
        section="checkpoints",
        action="switch",
        help="upload each checkpoint to W&B as an artifact (--no-artifact: metrics only)",
    )
    episode_gif: bool = option(
        True,
        section="checkpoints",
        action="switch",
        help="play one greedy episode at each checkpoint and save it as episode_{update}.gif "
        "in the run directory (and to W&B)",
    )
    eval_episodes: int = option(
        256,
        section="checkpoints",
        parse=non_negative_int,
        help="games of the behaviour evaluation played at each checkpoint, logged as "
        "eval/* (training.md §9.5); 0 turns it off",
    )
    eval_policy: str = option(
        "greedy",
        section="checkpoints",
        choices=("greedy", "sample"),
        help="how the checkpoint evaluation picks actions",
    )

    # -- resume
    resume: str | None = option(
        None,
        section="resume",
        action="optional",
        const=RESUME_LATEST,
        metavar="RESUME",
        help="continue from a checkpoint .pkl, a run directory or a run name; bare: the "
        "latest run under --checkpoint-dir",
    )
    resume_run: str | None = option(
        None, section="resume", help="run name or 8-hex W&B id to resume"
    )
    rewind: bool = option(
        False,
        section="resume",
        action="store_true",
        help="with --resume: cut the W&B history back to the checkpoint, then log from there",
    )
    reset_optimizer: bool = option(
        False,
        section="resume",
        action="store_true",
        help="on resume keep the weights but start Adam fresh",
    )
    init_from: str | None = option(
        None,
        section="resume",
        metavar="CHECKPOINT",
        help="start a fresh run from the network weights of a checkpoint .pkl, a params "
        ".npz or a run directory (its latest checkpoint): weights only, with a fresh "
        "optimizer, fresh games and this command line's recipe, e.g. expert iteration "
        "from a PPO run (training.md §4.4); the network must match",
    )

    # -- presets, devices and other
    preset: str = option(
        DEFAULT_PRESET,
        section="run",
        metavar="NAME|PATH",
        help="the preset the run starts from: a shipped one (canonical, default, gpu, "
        "expert-iteration) or a TOML file of the same form; values given on the command "
        "line or stored in a resumed checkpoint win over it (training.md §1.8)",
    )
    print_config: bool = option(
        False,
        section="run",
        action="store_true",
        help="print the resolved configuration (every option, its value and where it came "
        "from) as JSON and exit without training",
    )
    auto_tune: bool = option(
        False,
        section="run",
        action="store_true",
        help="adapt to the device before auto-scaling (CPU: 64 envs, 2 minibatches; TPU: "
        "envs x chips), touching only options left at their defaults (training.md §1.4)",
    )
    env_module: str = option(
        "hackmatrix.jax_env",
        section="run",
        help="import path of the game module (a jax_env-compatible stand-in for tests)",
    )
    multi_host: bool = option(
        False,
        section="run",
        action="store_true",
        help="call jax.distributed.initialize() and train over every process's devices "
        "(implied by the three flags below; see training-guide.md, Multi-host)",
    )
    coordinator_address: str | None = option(
        None,
        section="run",
        metavar="HOST:PORT",
        help="process 0's address (unset: $JAX_COORDINATOR_ADDRESS, else detected "
        "on a TPU pod / SLURM / Open MPI)",
    )
    num_processes: int | None = option(
        None,
        section="run",
        help="processes in the run (unset: $JAX_NUM_PROCESSES, else detected)",
    )
    process_id: int | None = option(
        None,
        section="run",
        help="this process's index, 0 writes the files (unset: $JAX_PROCESS_ID, else detected)",
    )
    distributed_timeout: int = option(
        300,
        section="run",
        metavar="SECONDS",
        help="multi-host: how long to wait for every process to join, and how soon a "
        "process whose peer stopped answering exits with an error",
    )


# Every option, in section order: the stored ones (TrainConfig) first within a section.
OPTIONS: tuple[Declared, ...] = declared(TrainConfig, RunOptions)
OPTION_BY_NAME = {item.name: item for item in OPTIONS}
CONFIG_FLAGS = tuple(f.name for f in dataclasses.fields(TrainConfig))
RUN_FLAGS = tuple(f.name for f in dataclasses.fields(RunOptions))


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
    _check_one_of(config, "value_trunk")
    if config.value_trunk != "shared" and config.network != "grid":
        raise ValueError(
            f"--value-trunk {config.value_trunk} is built for the grid network only; "
            "give --network grid"
        )
    _check_whole(config, "value_warmup_updates", 0, unit=" of updates")
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
    check_algorithm(config)
    check_restarts(config)
    _check_whole(config, "max_episode_steps", 0, unit=" of actions", why=" (0: no limit)")
    curriculum_flags.resolve(config)  # raises on a bad --curriculum* value


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


def build_parser(
    preset_values: Mapping[str, Any] | None = None, preset_name: str = "", epilog: str = ""
) -> argparse.ArgumentParser:
    """The trainer's command line, generated from `OPTIONS`. Each flag's default is the
    option's declared default, so `parse_args([])` gives the dataclass defaults (no preset);
    `preset_values` only adds the preset's value to each flag's help."""
    return build_parser_for(
        OPTIONS,
        description="Masked PPO (PureJaxRL style) on the HackMatrix JAX engine.",
        epilog=epilog,
        preset_values=preset_values,
        preset_name=preset_name,
    )


def explicit_flags(argv: Sequence[str]) -> set[str]:
    """Destinations (option names) of the flags given on the command line."""
    return set(command_line_values(argv))


def command_line_values(argv: Sequence[str]) -> dict[str, Any]:
    """{option name: parsed value} of the flags given on the command line, and only those."""
    return explicit_values(build_parser(), argv)


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The training config of parsed flags over the dataclass defaults, without a preset
    (what `--preset canonical` resolves to on a fresh run; `resolve.py` adds the layers)."""
    return TrainConfig(**{name: getattr(args, name) for name in CONFIG_FLAGS})


def run_options_from_args(args: argparse.Namespace) -> RunOptions:
    return RunOptions(**{name: getattr(args, name) for name in RUN_FLAGS})


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


def check_restarts(config: TrainConfig) -> None:
    """`--restart-share` and its two settings (checked even when the share is 0)."""
    share = config.restart_share
    if not (isinstance(share, (int, float)) and math.isfinite(share) and 0 <= share <= 1):
        raise ValueError(f"--restart-share must be a number in [0, 1], got {share!r}")
    stage = config.restart_min_stage
    if not isinstance(stage, int) or isinstance(stage, bool) or not 2 <= stage <= 8:
        raise ValueError(
            f"--restart-min-stage must be a whole stage in 2..8 (a state of stage 1 is a "
            f"game's start), got {stage!r}"
        )
    _check_whole(config, "restart_buffer", 1)
    _check_one_of(config, "restart_advantages")
    if config.restart_advantages == "apart":
        if config.restart_share == 0:
            raise ValueError(
                "--restart-advantages apart needs --restart-share above 0 (without restarts "
                "every game began at a reset: there is nothing to keep apart)"
            )
        if config.algorithm != "ppo":
            raise ValueError(
                "--restart-advantages apart is PPO's (expert iteration's loss does not read "
                f"the games' origin), got --algorithm {config.algorithm}"
            )


def check_algorithm(config: TrainConfig) -> None:
    """`--algorithm` and the search options of expert iteration (checked whatever the
    algorithm, so a preset or checkpoint never carries a value a later switch would refuse)."""
    _check_one_of(config, "algorithm")
    _check_whole(config, "search_simulations", 1, why=" (simulations per searched step)")
    _check_whole(
        config, "search_considered", 1, SEARCH_ACTIONS, why=" (root actions of the search)"
    )
    scale = config.search_gumbel_scale
    if not (math.isfinite(scale) and scale >= 0):
        raise ValueError(f"--search-gumbel-scale must be a finite number >= 0, got {scale}")
    c_scale = config.search_c_scale
    if not (math.isfinite(c_scale) and c_scale > 0):
        raise ValueError(f"--search-c-scale must be a finite number > 0, got {c_scale}")
    for name in (
        "search_tree_reward",
        "search_policy_target",
        "search_acting",
        "search_advantage_actions",
        "search_select",
    ):
        _check_one_of(config, name)
    if config.search_advantage_actions != "all" and config.search_policy_target != "advantage":
        raise ValueError(
            "--search-advantage-actions needs --search-policy-target advantage (the other "
            f"targets are labels over every action), got --search-policy-target "
            f"{config.search_policy_target}"
        )
    share = config.search_share
    if not (math.isfinite(share) and 0 < share <= 1):
        raise ValueError(f"--search-share must be a number in (0, 1], got {share}")
    if config.search_select != "first" and share == 1:
        raise ValueError(
            f"--search-select {config.search_select} needs --search-share below 1 (with "
            "every env searched there is nothing to select)"
        )
    select_from = config.search_select_from_update
    if not isinstance(select_from, int) or isinstance(select_from, bool) or select_from < 0:
        raise ValueError(
            f"--search-select-from-update must be a whole update number >= 0, got {select_from!r}"
        )
    if select_from > 0 and config.search_select == "first":
        raise ValueError(
            "--search-select-from-update has nothing to switch to: give --search-select "
            "furthest or split (before the update the first envs are searched, as with first)"
        )
    ppo_coef = config.search_ppo_coef
    if not (math.isfinite(ppo_coef) and ppo_coef >= 0):
        raise ValueError(f"--search-ppo-coef must be a finite number >= 0, got {ppo_coef}")
    gap = config.search_min_q_gap
    if not (math.isfinite(gap) and gap >= 0):
        raise ValueError(f"--search-min-q-gap must be a finite number >= 0, got {gap}")
    if config.search_keep_agreeing and gap == 0:
        raise ValueError(
            "--search-keep-agreeing needs --search-min-q-gap above 0 (without the gate every "
            "searched state is labelled already)"
        )
    if (share < 1 or ppo_coef > 0) and config.search_acting != "network":
        raise ValueError(
            "--search-share below 1 and --search-ppo-coef above 0 need --search-acting network "
            "(the network acts where the search does not, and PPO's term learns from the "
            f"network's own moves), got --search-acting {config.search_acting}"
        )


def _check_one_of(config: TrainConfig, name: str) -> None:
    """The option's value is one of its declared choices (a TrainConfig built in code or
    from a checkpoint skips the parser's own check)."""
    choices = OPTION_BY_NAME[name].spec.choices or ()
    value = getattr(config, name)
    if value not in choices:
        flag = "--" + name.replace("_", "-")
        names = list(map(str, choices))
        allowed = " or ".join(names) if len(names) <= 2 else "one of " + ", ".join(names)
        raise ValueError(f"{flag} must be {allowed}, got {value!r}")


def _check_whole(
    config: TrainConfig, name: str, low: int, high: int | None = None, unit="", why=""
) -> None:
    """The option is a whole number (not a bool) in low..high, or >= low without a high;
    the error reads "--NAME must be a whole number{unit} >= low{why}, got VALUE"."""
    value = getattr(config, name)
    whole = isinstance(value, int) and not isinstance(value, bool)
    if not whole or value < low or (high is not None and value > high):
        flag = "--" + name.replace("_", "-")
        span = f">= {low}" if high is None else f"in {low}..{high}"
        raise ValueError(f"{flag} must be a whole number{unit} {span}{why}, got {value!r}")


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


def _late_switch_note(switch: int, num_updates: int, what: str, here: str) -> str | None:
    """The start-up note for a switch at or past the run's last update (allowed: the run is
    the first part of one that a resume extends); None for a switch inside the run or none."""
    if switch == 0 or switch < num_updates:
        return None
    return (
        f"Note: {what} from update {switch}, after this run's last update ({num_updates}): "
        f"{here} unless a resume extends the run"
    )


def program_levers_note(config: TrainConfig) -> str | None:
    """The start-up note for a run that ends before its program levers come in."""
    return _late_switch_note(
        config.program_levers_from_update,
        config.num_updates,
        "the program levers pay",
        "they pay nothing here",
    )


def search_select_note(config: TrainConfig) -> str | None:
    """The start-up note for a run that ends before `--search-select-from-update`: it
    searches the first envs throughout (allowed: a resume can carry it past the switch)."""
    return _late_switch_note(
        config.search_select_from_update,
        config.num_updates,
        f"--search-select {config.search_select} picks the searched envs",
        "this run searches the first envs throughout",
    )


def value_warmup_note(config: TrainConfig) -> str | None:
    """The start-up note for a run that the value head's warm-up fills: only the head
    moves in it (allowed: a warm start for later runs, or a resume extends it)."""
    return _late_switch_note(
        config.value_warmup_updates,
        config.num_updates,
        "the whole network trains",
        "only the value head moves in this run"
        + ("" if config.value_trunk == "shared" else " (with its value trunk)"),
    )


# The batch the staged default's delay was measured at (specs/experiments/19-, 20-*.md): 256 x 128.
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
        f"{format_count(measured)} steps (specs/experiments/20-staged-default.md §20.1)"
    )
