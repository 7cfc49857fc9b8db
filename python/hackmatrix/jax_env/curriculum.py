"""Curriculum starts: new games that begin at a later stage, owning programs, with extra resources.

A reset with `EnvParams` whose `curriculum_prob` is p becomes, with chance p,
a *curriculum start*:

- the stage s is drawn from `curriculum_stage_weights` (relative weights of
  stages 1..8), and the stage is generated exactly as the engine generates
  stage s on a stage completion (game-rules.md §10.2, §10.6): `interval` is
  13 − s, and generateStage places s starting transmissions;
- k programs, k uniform in `curriculum_programs` = [lo, hi], are owned, the k
  drawn uniformly among the 23 (k = 23: all of them);
- the player's credits, energy and data siphons are the canonical starting
  bonus plus a count uniform in `curriculum_credits` / `_energy` /
  `_data_siphons` = [lo, hi];
- the game starts with t siphon transmissions pending, t uniform in
  `curriculum_transmissions` = [lo, hi]: they appear at the end of the first
  enemy phase, as a siphon's would (game-rules.md §8.7), so the agent meets
  siphon-spawned enemies without having siphoned.

Everything else is the canonical reset of §10.1 (start corner, starting
bonus, hp 3, score 0, stepIndex 0, seed), so every curriculum start is a
legal `setState` state (protocol.md §6) and replays in both engines.

The curriculum's own choices are not game decisions: they never use the
keyed hash of randomness.md, but a JAX PRNG key derived from the seed alone
(`curriculum_key`). So a reset with the default params draws exactly the
canonical sequence and yields the canonical state, and a curriculum start is
a pure function of (seed, params): `reset_from_seed` reproduces it.
"""

import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .constants import LAST_STAGE, MAX_OCCUPANTS, NUM_PROGRAMS, VALUE_CAP
from .generation import generate_stage, starting_state
from .state import EnvParams, EnvState

CURRICULUM_STREAM = 0x16C0  # root of the curriculum's PRNG keys: fixed, unrelated to any game site
BASE_INTERVAL_PLUS_STAGE = 13  # interval of stage s is 13 - s (game-rules.md §0, BASE_INTERVAL)
# Bonus the canonical start may already have given (game-rules.md §10.1); extra resources
# stay below the protocol's value cap with it, so every start loads through setState.
_STARTING_BONUS = {"credits": 10, "energy": 11, "data_siphons": 1}
# The transmissions' key is folded from the game's curriculum key rather than split with the
# others, so adding it left every earlier curriculum start exactly as it was.
_TRANSMISSIONS_FOLD = 8


def curriculum_key(seed: jax.Array | int) -> jax.Array:
    """The PRNG key of the curriculum draws for one game: a function of its seed only."""
    return jax.random.fold_in(jax.random.PRNGKey(CURRICULUM_STREAM), jnp.asarray(seed, jnp.uint32))


def _uniform_count(key: jax.Array, bounds: jax.Array | np.ndarray) -> jax.Array:
    return jax.random.randint(key, (), bounds[0], bounds[1] + 1, dtype=jnp.int32)


def apply_curriculum(state: EnvState, params: EnvParams) -> EnvState:
    """`state` as `starting_state` leaves it (before generation), with the curriculum's changes.

    The changes apply with chance `params.curriculum_prob`.
    """
    game_key = curriculum_key(state.seed)
    k_on, k_stage, k_count, k_pick, k_credits, k_energy, k_siphons = jax.random.split(game_key, 7)
    k_transmissions = jax.random.fold_in(game_key, _TRANSMISSIONS_FOLD)
    on = jax.random.uniform(k_on) < params.curriculum_prob
    stage = 1 + jax.random.categorical(k_stage, jnp.log(params.curriculum_stage_weights)).astype(
        jnp.int32
    )
    count = _uniform_count(k_count, params.curriculum_programs)
    order = jnp.argsort(
        jnp.argsort(jax.random.uniform(k_pick, (NUM_PROGRAMS,)))
    )  # a uniform random rank
    board = state.board

    def extra(key: jax.Array, bounds: jax.Array | np.ndarray) -> jax.Array:
        return jnp.where(on, _uniform_count(key, bounds), 0)

    board = board.replace(
        owned=board.owned | (on & (order < count)),
        credits=board.credits + extra(k_credits, params.curriculum_credits),
        energy=board.energy + extra(k_energy, params.curriculum_energy),
        data_siphons=board.data_siphons + extra(k_siphons, params.curriculum_data_siphons),
    )
    return state.replace(
        board=board,
        stage=jnp.where(on, stage, state.stage),
        interval=jnp.where(on, BASE_INTERVAL_PLUS_STAGE - stage, state.interval),
        pending=state.pending + extra(k_transmissions, params.curriculum_transmissions),
    )


def new_game_with_params(seed: jax.Array | int, params: EnvParams) -> EnvState:
    """reset(seed) of §10.1, the curriculum of `params` applied before the stage is generated."""
    return generate_stage(apply_curriculum(starting_state(seed), params))


# ------------------------------------------------------- building checked params (plain Python)


Bounds = Sequence[int]


def check_curriculum(
    prob: float,
    stage_weights: Sequence[float],
    programs: Bounds,
    credits: Bounds,
    energy: Bounds,
    data_siphons: Bounds,
    transmissions: Bounds = (0, 0),
) -> None:
    """Raise ValueError, naming the setting, unless the values make legal curriculum starts."""
    if not (isinstance(prob, (int, float)) and 0.0 <= prob <= 1.0):
        raise ValueError(f"curriculum probability must be a number in [0, 1], got {prob!r}")
    weights = list(stage_weights)
    if len(weights) != LAST_STAGE:
        raise ValueError(
            f"curriculum stage weights need {LAST_STAGE} entries (stages 1..{LAST_STAGE}), "
            f"got {len(weights)}"
        )
    if any(not math.isfinite(w) or w < 0 for w in weights) or sum(weights) <= 0:
        raise ValueError(
            f"curriculum stage weights must be finite, non-negative and not all zero, got {weights}"
        )
    ranges = {"programs": (programs, NUM_PROGRAMS)}
    for name, given in (("credits", credits), ("energy", energy), ("data_siphons", data_siphons)):
        ranges[name] = (given, VALUE_CAP - _STARTING_BONUS[name])
    # More pending transmissions than cells to hold them would only be lost (§8.7).
    ranges["transmissions"] = (transmissions, MAX_OCCUPANTS)
    for name, (bounds, top) in ranges.items():
        if len(bounds) != 2 or not all(isinstance(v, (int, np.integer)) for v in bounds):
            raise ValueError(
                f"curriculum {name} must be a pair of integers (lo, hi), got {bounds!r}"
            )
        lo, hi = bounds
        if not 0 <= lo <= hi <= top:
            raise ValueError(
                f"curriculum {name} range must satisfy 0 <= lo <= hi <= {top}, got {lo}-{hi}"
            )


def curriculum_params(
    prob: float = 1.0,
    stage_weights: Sequence[float] | None = None,
    programs: Bounds = (0, 0),
    credits: Bounds = (0, 0),
    energy: Bounds = (0, 0),
    data_siphons: Bounds = (0, 0),
    transmissions: Bounds = (0, 0),
) -> EnvParams:
    """Checked `EnvParams` for a curriculum; `stage_weights` None means stage 1 only.

    With every argument at its default a curriculum start IS the canonical
    start (stage 1, no programs, no extra resources, nothing pending).
    """
    weights = (
        [1.0] + [0.0] * (LAST_STAGE - 1)
        if stage_weights is None
        else [float(w) for w in stage_weights]
    )
    check_curriculum(prob, weights, programs, credits, energy, data_siphons, transmissions)
    return EnvParams(
        curriculum_prob=np.asarray(prob, np.float32),
        curriculum_stage_weights=np.asarray(weights, np.float32),
        curriculum_programs=np.asarray(programs, np.int32),
        curriculum_credits=np.asarray(credits, np.int32),
        curriculum_energy=np.asarray(energy, np.int32),
        curriculum_data_siphons=np.asarray(data_siphons, np.int32),
        curriculum_transmissions=np.asarray(transmissions, np.int32),
    )


def with_curriculum_prob(params: EnvParams, prob: float) -> EnvParams:
    """`params` with another start probability (same dtype: a jitted caller does not recompile)."""
    if not 0.0 <= float(prob) <= 1.0:
        raise ValueError(f"curriculum probability must be in [0, 1], got {prob!r}")
    return params.replace(curriculum_prob=np.asarray(prob, np.float32))
