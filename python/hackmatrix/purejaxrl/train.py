"""Action-masked PPO in the PureJaxRL style (training.md §2).

`make_train(config, env)` builds the whole algorithm as pure functions:

    rollout  (lax.scan over num_steps, vmap over envs)
    GAE      (reverse lax.scan over time)
    epochs   (lax.scan) of minibatches (lax.scan) of Adam steps

and wraps `log_interval` updates into one jitted *chunk* (§2.8). State is
created outside jit by `init`, so a resume can replace any part of it.
With a device mesh the env batch is sharded over devices (data parallel);
parameters are replicated and XLA inserts the gradient all-reduce.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.training.train_state import TrainState
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from ..names import (
    FIRST_PROGRAM_ACTION,
    PLAYER_SIPHONS_FEATURE,
    PLAYER_SIPHONS_SCALE,
    PROGRAM_SPAWN_COSTS,
    SIPHON_ACTION,
    Program,
)
from . import distribution
from .autoreset import make_auto_reset
from .config import TrainConfig, check_reward_weight_names
from .network import NUM_ACTIONS, OBS_SIZE, PLAYER_SIZE, PROGRAMS_SIZE, make_network
from .value_target import make_value_scale

# The program actions (one per program), for `--ent-coef-programs`'s two-way choice.
PROGRAM_ACTIONS = np.arange(NUM_ACTIONS) >= FIRST_PROGRAM_ACTION

ENV_AXIS = "envs"
UNDO_ACTION = FIRST_PROGRAM_ACTION + Program.UNDO


class RunnerState(NamedTuple):
    """Everything one update reads and writes."""

    train_state: TrainState
    env_state: Any
    obs: jnp.ndarray  # f32[E, 1545]: the observation the next action is chosen from
    episode_return: jnp.ndarray  # f32[E]: running return of the current episode
    episode_length: jnp.ndarray  # i32[E]: steps taken in the current episode
    rng: jnp.ndarray
    # f32[E]: running return of the reward PPO trains on under --reward-weights, --program-bonus,
    # --program-use-bonus or --distance-shaping potential; None when the env's reward is used as is
    weighted_episode_return: Any
    # bool[E]: the current episode has run a program (--program-use-bonus); None without it
    program_used: Any = None


class Transition(NamedTuple):
    obs: jnp.ndarray  # o_t, the observation a_t was chosen from
    action: jnp.ndarray
    reward: jnp.ndarray
    done: jnp.ndarray
    log_prob: jnp.ndarray
    value: jnp.ndarray
    mask: jnp.ndarray  # the mask used for sampling a_t
    completed_return: jnp.ndarray  # episode return if the episode ended here, else 0
    completed_length: jnp.ndarray  # episode length if the episode ended here, else 0
    empty_mask: jnp.ndarray
    components: jnp.ndarray  # f32[15] reward components, canonical order
    stage: jnp.ndarray
    # With --reward-weights, --program-bonus or --distance-shaping potential,
    # `reward` is the shaped reward PPO trains on and these keep the env's own
    # reward and the shaped episode returns; else None.
    env_reward: Any
    completed_weighted_return: Any
    program_bonus: Any  # f32[E] the --program-bonus part of `reward`; None without the flag
    # f32[E] what `--distance-shaping potential` added (the retreat charge, <= 0); else None
    distance_retreat: Any
    # With --max-episode-steps: bool[E] the step ended the episode by the time limit (`done`
    # is then also true) and f32[E] V(last observation) there, 0 elsewhere; else None.
    truncated: Any = None
    truncation_value: Any = None
    program_use_bonus: Any = None  # f32[E] the --program-use-bonus part of `reward`; else None
    spending_refund: Any = None  # f32[E] the --free-program-spending part of `reward`; else None
    siphon_pay_moved: Any = None  # f32[E] the --siphon-pay-on-use part of `reward`; else None


class LossInputs(NamedTuple):
    """The per-step fields of a Transition that the PPO loss reads."""

    obs: jnp.ndarray
    mask: jnp.ndarray
    action: jnp.ndarray
    log_prob: jnp.ndarray


class Trainer(NamedTuple):
    """The pieces `make_train` builds; see the module docstring."""

    config: TrainConfig
    network: Any
    optimizer: Any
    init: Any  # (rng) -> RunnerState
    train_chunk: (
        Any  # jitted (RunnerState, num_active[, env_params]) -> (RunnerState, per-update metrics)
    )
    env_sharding: Any  # sharding for arrays whose leading axis is the env batch
    replicated: Any
    reward_names: tuple
    phases: dict  # the update's unjitted phase functions by name (profiling)


def reward_weight_vector(weights: dict, reward_names: tuple) -> np.ndarray:
    """f32[15]: the weight of each component in canonical order, 1 for those not named."""
    check_reward_weight_names(weights, reward_names)
    return np.array([weights.get(name, 1.0) for name in reward_names], np.float32)


def linear_progress(fraction: float, update: int, num_updates: int) -> float:
    """How far a schedule lasting the first `fraction` of `num_updates` has gone at `update`:
    0 at the start, 1 from update `fraction x num_updates` on."""
    end = fraction * num_updates
    return min(1.0, update / end) if end > 0 else 1.0


def reward_anneal_progress(config: TrainConfig, update: int) -> float:
    """How far `--reward-weights-anneal` has moved the weights toward their end at `update`.

    0 at the start, 1 from update `anneal x num_updates` on; always 0 without the flag.
    """
    if config.reward_weights_anneal is None:
        return 0.0
    return linear_progress(config.reward_weights_anneal, update, config.num_updates)


def ent_coef_at(config: TrainConfig, update: int) -> float:
    """The entropy coefficient in force at `update`: `--ent-coef` moved linearly to
    `--ent-coef-final` over the first `--ent-coef-anneal` of the updates, then held there;
    `--ent-coef` throughout without the schedule."""
    if config.ent_coef_anneal is None or config.ent_coef_final is None:
        return config.ent_coef
    t = linear_progress(config.ent_coef_anneal, update, config.num_updates)
    return config.ent_coef + (config.ent_coef_final - config.ent_coef) * t


def program_levers_at(config: TrainConfig, update: int) -> float:
    """1 when the program levers (`--program-bonus`, `--program-use-bonus`,
    `--free-program-spending`, `--ent-coef-programs`) act at `update`, 0 before
    `--program-levers-from-update`."""
    return 1.0 if update >= config.program_levers_from_update else 0.0


def reward_weights_at(config: TrainConfig, update: int) -> dict[str, float] | None:
    """The weights in force at `update`: each moved from its `--reward-weights` value w to its
    `--reward-weights-final` value f (1 unless named) as w + (f - w) x progress."""
    if config.reward_weights is None:
        return None
    t = reward_anneal_progress(config, update)
    start, final = config.reward_weights, config.reward_weights_final or {}
    names = list(start) + [name for name in final if name not in start]
    weights = {}
    for name in names:
        w, f = start.get(name, 1.0), final.get(name, 1.0)
        weights[name] = w + (f - w) * t
    return weights


def make_reward_weighting(
    weights: dict | None, reward_names: tuple
) -> Callable[..., jax.Array] | None:
    """`--reward-weights` as `weigh(components, vector=None)`, or None without weights.

    The weighted reward is sum_i w_i * component_i with w_i = 1 for components
    not named, added left to right in canonical order like the env's own total
    (rewards.md §2). Without weights the trainer uses the env's reward itself
    (not a recomputed sum), so default runs are bit for bit unchanged.
    `vector` (f32[15], traced) replaces the weights, for an annealed schedule.
    """
    if weights is None:
        return None
    fixed = reward_weight_vector(weights, reward_names)

    def weigh(components, vector=None):
        vector = fixed if vector is None else vector
        total = vector[0] * components[..., 0]
        for i in range(1, len(reward_names)):
            total = total + vector[i] * components[..., i]
        return total

    return weigh


def owned_programs(obs: jax.Array) -> jax.Array:
    """The 0/1 vector of programs in hand (observation.md §4), one entry per program."""
    return obs[..., PLAYER_SIZE : PLAYER_SIZE + PROGRAMS_SIZE]


def owned_program_count(obs: jax.Array) -> jax.Array:
    """Programs in hand, read from the flat observation's 0/1 program vector (observation.md §4)."""
    return owned_programs(obs).sum(axis=-1)


def program_bonus_sizes(scale: str) -> np.ndarray:
    """What one taken program counts for, per program: 1 (flat) or its spawn cost."""
    if scale == "flat":
        return np.ones(PROGRAMS_SIZE, np.float32)
    if scale == "spawn-cost":
        return np.asarray(PROGRAM_SPAWN_COSTS, np.float32)
    raise ValueError(f"--program-bonus-scale must be flat or spawn-cost, got {scale!r}")


def make_program_bonus(
    weight: float, at_death: str = "pay", scale: str = "flat"
) -> Callable[..., jax.Array] | None:
    """`--program-bonus` as `bonus(obs_before, obs_after, died=None)`, or None when 0.

    The bonus is weight x (programs owned after the step - programs owned
    before it), both read from the same episode's observations, so programs a
    curriculum start hands out are not paid, and an UNDO that takes a new
    program back takes its bonus back too (a pick-up cannot be farmed).
    With `scale="spawn-cost"` (`--program-bonus-scale`) each program counts
    its block's spawn cost instead of 1: a block queues that many
    transmissions, as a data block queues its points, so weight 0.5 prices a
    program per unit of danger like score_gain prices data (learning.md §21).
    With `at_death="withhold"` a program taken on a step where the player
    dies (`died`) pays nothing: it can never be run, and one seed learned to
    siphon for the bonus as it died (learning.md §17.2).
    """
    if weight == 0:
        return None
    weight32 = np.float32(weight)
    sizes = program_bonus_sizes(scale)

    def bonus(obs_before, obs_after, died=None):
        gained = owned_programs(obs_after) - owned_programs(obs_before)
        paid = weight32 * (gained @ sizes)
        if at_death == "withhold":
            if died is None:
                raise ValueError(
                    "--program-bonus-at-death withhold needs the env's info['died']; "
                    "this game module does not provide it"
                )
            paid = jnp.where(died, jnp.minimum(paid, 0.0), paid)
        return paid

    return bonus


def make_retreat_charge(mode: str, reward_names: tuple) -> Callable[[dict, Any], jax.Array] | None:
    """`--distance-shaping potential` as `charge(info, vector)`, or None for `canonical`.

    The canonical `distance_shaping` pays 0.05 per cell gained toward the exit and
    nothing for a cell lost (rewards.md §4.6), so stepping away and back earns
    0.05 - 2 x 0.01 per round trip. `potential` also charges 0.05 per cell lost,
    from the env's signed `info["exit_distance_delta"]`, making the shaping the
    difference of a potential (-0.05 x distance): a loop then earns nothing.
    The charge is scaled by the `distance_shaping` weight (`vector`, or 1).
    """
    if mode == "canonical":
        return None
    index = reward_names.index("distance_shaping")

    def charge(info, vector):
        if "exit_distance_delta" not in info:
            raise ValueError(
                "--distance-shaping potential needs the env's info['exit_distance_delta'] "
                "(the signed exit-distance change); this game module does not provide it"
            )
        lost = jnp.minimum(info["exit_distance_delta"], 0).astype(jnp.float32)
        weight = jnp.float32(1.0) if vector is None else vector[index]
        return weight * jnp.float32(0.05) * lost

    return charge


def make_spending_refund(
    enabled: bool, reward_names: tuple
) -> Callable[[jax.Array, jax.Array, Any], jax.Array] | None:
    """`--free-program-spending` as `refund(action, components, vector)`, or None when off.

    `resource_gain` (rewards.md §4.9) pays 0.05 per credit or energy gained and
    charges 0.05 per unit spent, so every program run costs its price in reward
    and hoarding pays (learning.md §17.1). The refund adds back the negative
    part of `resource_gain` on a program action other than UNDO, and takes
    away the positive part on UNDO (giving spent resources back is then worth
    nothing), so a program-UNDO loop earns nothing; UNDO's negative part (taking
    a siphon's gain back) stays, so a siphon-UNDO loop still nets 0. Scaled by
    the `resource_gain` weight (`vector`, or 1).
    """
    if not enabled:
        return None
    index = reward_names.index("resource_gain")

    def refund(action, components, vector):
        gain = components[..., index]
        spent_on_program = (action >= FIRST_PROGRAM_ACTION) & (action != UNDO_ACTION)
        back = jnp.where(
            action == UNDO_ACTION,
            -jnp.maximum(gain, 0.0),
            jnp.where(spent_on_program, -jnp.minimum(gain, 0.0), 0.0),
        )
        weight = jnp.float32(1.0) if vector is None else vector[index]
        return weight * back

    return refund


def make_siphon_pay_on_use(
    enabled: bool, reward_names: tuple
) -> Callable[[jax.Array, jax.Array, jax.Array, jax.Array, Any], jax.Array] | None:
    """`--siphon-pay-on-use` as `move(action, components, obs, next_obs, vector)`, or None.

    The canonical `data_siphon` (rewards.md §4.5) pays 1.0 for walking onto a data
    siphon, whether or not it is ever spent; agents that stop siphoning keep
    collecting them (learning.md §18.3, `siphon_hoarding`). The move takes that pay
    off the pickup and pays it on the siphon action instead, so a data siphon is
    worth its 1.0 only once it is spent. UNDO that gives siphons back charges 1.0
    for each (read from the observation's siphon count, observation.md §4), so a
    siphon-UNDO loop nets 0. Scaled by the `data_siphon` weight (`vector`, or 1).
    """
    if not enabled:
        return None
    index = reward_names.index("data_siphon")

    def held(obs):  # data siphons held, from the flat observation's player features
        return jnp.round(obs[..., PLAYER_SIPHONS_FEATURE] * PLAYER_SIPHONS_SCALE)

    def move(action, components, obs, next_obs, vector):
        regained = jnp.maximum(held(next_obs) - held(obs), 0)
        given_back = jnp.where(action == UNDO_ACTION, regained, 0)
        spent = (action == SIPHON_ACTION).astype(jnp.float32)
        weight = jnp.float32(1.0) if vector is None else vector[index]
        return weight * (spent - given_back - components[..., index])

    return move


def make_optimizer(config: TrainConfig) -> optax.GradientTransformation:
    return optax.chain(
        optax.clip_by_global_norm(config.max_grad_norm),
        optax.adam(config.lr, b1=0.9, b2=0.999, eps=1e-8),
    )


def make_mesh(devices: Sequence[jax.Device] | None = None) -> Mesh:
    devices = list(devices if devices is not None else jax.devices())
    return Mesh(np.array(devices), (ENV_AXIS,))


# Trainers built in this process, newest last: an equal request returns the same Trainer,
# whose jitted functions are then already traced and compiled (a resume, a second run in
# one process, the tests' many tiny runs). Tracing and lowering the chunk is seconds even
# when the compiled program comes from the persistent cache.
_TRAINERS: OrderedDict[Any, Trainer] = OrderedDict()
TRAINER_CACHE_SIZE = 8


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    return value


# Settings of a run that the trainer's functions never read (the run's length and seed are
# the caller's loop and key): runs that differ only in them share one trainer.
# tests/purejaxrl/test_train_cache.py checks that building and tracing never reads them.
RUN_ONLY_FIELDS = ("total_timesteps", "seed")


def _trainer_key(config: TrainConfig, env: ModuleType, env_params: Any, mesh: Mesh) -> Any:
    """What the trainer's functions depend on, by value: the config but for its
    `RUN_ONLY_FIELDS`, the env module, the env params and the mesh (None where a part
    cannot be hashed, which builds a new trainer)."""
    leaves, treedef = jax.tree_util.tree_flatten(env_params)
    arrays = [np.asarray(leaf) for leaf in leaves]
    fields = [f.name for f in dataclasses.fields(config) if f.name not in RUN_ONLY_FIELDS]
    key = (
        tuple((name, _hashable(getattr(config, name))) for name in fields),
        env,
        treedef,
        tuple((a.shape, a.dtype.str, a.tobytes()) for a in arrays),
        mesh,
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def make_train(
    config: TrainConfig, env: ModuleType, env_params: Any = None, mesh: Mesh | None = None
) -> Trainer:
    """Build init and the jitted chunk for `config` on `env` (a jax_env-like module).

    The trainer is pure, so an equal request (same config but for its length and
    seed, env module, env params and mesh) returns the one already built in this
    process, carrying the caller's config (`TRAINER_CACHE_SIZE` newest are kept).
    """
    if config.num_minibatches is None or config.update_epochs is None:
        raise ValueError("resolve num_minibatches/update_epochs (auto_scale_for_batch_size) first")
    env_params = env.EnvParams() if env_params is None else env_params
    mesh = mesh if mesh is not None else make_mesh(jax.devices()[:1])
    key = _trainer_key(config, env, env_params, mesh)
    if key is not None and key in _TRAINERS:
        _TRAINERS.move_to_end(key)
        return _TRAINERS[key]._replace(config=config)
    trainer = _build_trainer(config, env, env_params, mesh)
    if key is not None:
        _TRAINERS[key] = trainer
        while len(_TRAINERS) > TRAINER_CACHE_SIZE:
            _TRAINERS.popitem(last=False)
    return trainer


def _build_trainer(config: TrainConfig, env: ModuleType, env_params: Any, mesh: Mesh) -> Trainer:
    """`make_train` without the cache: every call builds new functions."""
    if config.num_envs % mesh.size:
        raise ValueError(
            f"num_envs={config.num_envs} must be divisible by the "
            f"{mesh.size} devices it is sharded over"
        )
    env_sharding = NamedSharding(mesh, P(ENV_AXIS))
    time_env_sharding = NamedSharding(mesh, P(None, ENV_AXIS))
    replicated = NamedSharding(mesh, P())
    reward_names = tuple(env.REWARD_COMPONENT_NAMES)
    weigh_reward = make_reward_weighting(config.reward_weights, reward_names)
    program_bonus = make_program_bonus(
        config.program_bonus, config.program_bonus_at_death, config.program_bonus_scale
    )
    retreat_charge = make_retreat_charge(config.distance_shaping, reward_names)
    spending_refund = make_spending_refund(config.free_program_spending, reward_names)
    siphon_pay_move = make_siphon_pay_on_use(config.siphon_pay_on_use, reward_names)
    # The signed charge scales with the distance_shaping weight, fixed or annealed.
    fixed_weights = (
        None
        if config.reward_weights is None
        else reward_weight_vector(config.reward_weights, reward_names)
    )
    # PPO trains on a reward other than the env's own: keep both and both returns.
    use_bonus = np.float32(config.program_use_bonus)  # 0: off
    shapes_reward = (
        weigh_reward is not None
        or program_bonus is not None
        or retreat_charge is not None
        or spending_refund is not None
        or siphon_pay_move is not None
        or use_bonus != 0
    )
    max_episode_steps = config.max_episode_steps  # 0: the game's own episodes, no limit

    network = make_network(config.hidden_dim, config.num_layers, config.bf16, config.network)
    # `--value-target`: V in return units from the head, and the head's target from a return.
    value_scale = make_value_scale(config.value_target)
    optimizer = make_optimizer(config)
    num_envs, num_steps = config.num_envs, config.num_steps
    num_minibatches, batch_size = config.num_minibatches, config.batch_size

    v_reset = jax.vmap(env.reset, in_axes=(0, None))
    v_step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    v_mask = jax.vmap(env.action_mask)
    auto_reset = make_auto_reset(env, env_params, num_envs)

    def keep_env_sharded(tree, sharding=env_sharding):
        return jax.tree_util.tree_map(lambda x: jax.lax.with_sharding_constraint(x, sharding), tree)

    # ------------------------------------------------------------ initial state
    def init(rng) -> RunnerState:
        rng, net_key, reset_key = jax.random.split(rng, 3)
        params = network.init(net_key, jnp.zeros((1, OBS_SIZE), jnp.float32))
        train_state = TrainState.create(apply_fn=network.apply, params=params, tx=optimizer)
        # An int32 step, not a weakly typed Python 0: a runner restored from a checkpoint has
        # the same types, so a resume in this process reuses the compiled chunk.
        train_state = train_state.replace(step=jnp.zeros((), jnp.int32))
        reset = jax.jit(v_reset, out_shardings=env_sharding)
        obs, env_state = reset(jax.random.split(reset_key, num_envs), env_params)
        return RunnerState(
            train_state=jax.device_put(train_state, replicated),
            env_state=env_state,
            obs=obs,
            episode_return=jax.device_put(jnp.zeros(num_envs, jnp.float32), env_sharding),
            episode_length=jax.device_put(jnp.zeros(num_envs, jnp.int32), env_sharding),
            rng=jax.device_put(rng, replicated),
            weighted_episode_return=None
            if not shapes_reward
            else jax.device_put(jnp.zeros(num_envs, jnp.float32), env_sharding),
            program_used=None
            if use_bonus == 0
            else jax.device_put(jnp.zeros(num_envs, bool), env_sharding),
        )

    # ------------------------------------------------------------------ rollout
    def env_step(carry, _, env_params=env_params, reward_vector=None, program_levers=None):
        """`program_levers` (traced 0 or 1, `--program-levers-from-update`) scales the
        program bonus, the program-use bonus and the spending refund; None: always on."""
        runner = carry
        params = runner.train_state.params

        def switched(paid):  # a program lever's payment: 0 before its update
            return paid if paid is None or program_levers is None else program_levers * paid

        rng, act_key, step_key, reset_key = jax.random.split(runner.rng, 4)

        mask = v_mask(runner.env_state)
        logits, head = network.apply(params, runner.obs)
        value = value_scale.to_value(head)
        action, empty = distribution.sample(act_key, logits, mask)
        log_prob = distribution.log_prob(logits, mask, action)

        next_obs, next_state, reward, done, info = v_step(
            jax.random.split(step_key, num_envs), runner.env_state, action, env_params
        )
        episode_return = runner.episode_return + reward
        episode_length = runner.episode_length + 1
        truncated, truncation_value = None, None
        if max_episode_steps:
            # A time limit is not a game over: the env's future is still worth V(last obs),
            # which GAE adds back (training.md §2.5). The episode then ends like any other.
            truncated = (episode_length >= max_episode_steps) & ~done
            _, last_obs_head = network.apply(params, next_obs)
            truncation_value = jnp.where(truncated, value_scale.to_value(last_obs_head), 0.0)
            done = done | truncated
        completed_return = jnp.where(done, episode_return, 0.0)
        completed_length = jnp.where(done, episode_length, 0)

        # Read before the auto-reset replaces a finished game's last observation.
        bonus = switched(
            None if program_bonus is None else program_bonus(runner.obs, next_obs, info.get("died"))
        )
        first_use, program_used = None, None
        if use_bonus != 0:
            # Paid once per episode, on its first program action: bounded, so no loop of
            # programs and UNDO can farm it (learning.md §16).
            ran_program = action >= FIRST_PROGRAM_ACTION
            first_use = switched(
                use_bonus * (ran_program & ~runner.program_used).astype(jnp.float32)
            )
            program_used = keep_env_sharded((runner.program_used | ran_program) & ~done)
        components = jnp.stack([info["reward_components"][name] for name in reward_names], -1)
        weights_now = fixed_weights if reward_vector is None else reward_vector
        moved = None
        if siphon_pay_move is not None:  # reads the siphon count before the auto-reset
            moved = siphon_pay_move(action, components, runner.obs, next_obs, weights_now)
        # Auto-reset with its own keys; the carried obs is the post-reset one.
        next_state, next_obs = auto_reset(reset_key, done, next_state, next_obs, env_params)

        weighted, completed_weighted, weighted_return = None, None, None
        retreat, refund = None, None
        if retreat_charge is not None:
            retreat = retreat_charge(info, weights_now)
        if spending_refund is not None:
            refund = switched(spending_refund(action, components, weights_now))
        if shapes_reward:
            weighted = reward if weigh_reward is None else weigh_reward(components, reward_vector)
            if bonus is not None:
                weighted = weighted + bonus
            if retreat is not None:
                weighted = weighted + retreat
            if first_use is not None:
                weighted = weighted + first_use
            if refund is not None:
                weighted = weighted + refund
            if moved is not None:
                weighted = weighted + moved
            weighted_return = runner.weighted_episode_return + weighted
            completed_weighted = jnp.where(done, weighted_return, 0.0)
            weighted_return = keep_env_sharded(jnp.where(done, 0.0, weighted_return))
        transition = Transition(
            obs=runner.obs,
            action=action,
            reward=reward if weighted is None else weighted,
            env_reward=None if weighted is None else reward,
            completed_weighted_return=completed_weighted,
            program_bonus=bonus,
            distance_retreat=retreat,
            done=done,
            log_prob=log_prob,
            value=value,
            mask=mask,
            completed_return=completed_return,
            completed_length=completed_length,
            empty_mask=empty,
            components=components,
            stage=info["stage"],
            truncated=truncated,
            truncation_value=truncation_value,
            program_use_bonus=first_use,
            spending_refund=refund,
            siphon_pay_moved=moved,
        )
        new_runner = runner._replace(
            env_state=keep_env_sharded(next_state),
            obs=keep_env_sharded(next_obs),
            episode_return=keep_env_sharded(jnp.where(done, 0.0, episode_return)),
            episode_length=keep_env_sharded(jnp.where(done, 0, episode_length)),
            weighted_episode_return=weighted_return,
            rng=rng,
            program_used=program_used,
        )
        return new_runner, transition

    # ---------------------------------------------------------------------- GAE
    def compute_gae(traj: Transition, last_value):
        def backward(carry, t):
            next_advantage, next_value = carry
            not_done = 1.0 - t.done.astype(jnp.float32)
            delta = t.reward + config.gamma * next_value * not_done - t.value
            if t.truncation_value is not None:  # a time limit: bootstrap from the last obs
                delta = delta + config.gamma * t.truncation_value
            advantage = delta + config.gamma * config.gae_lambda * not_done * next_advantage
            return (advantage, t.value), advantage

        _, advantages = jax.lax.scan(
            backward, (jnp.zeros_like(last_value), last_value), traj, reverse=True
        )
        return advantages, advantages + traj.value

    # --------------------------------------------------------------------- loss
    def loss_fn(params, batch, ent_coef=None, ent_coef_programs=None):
        """`ent_coef` (traced) replaces `config.ent_coef`, for `--ent-coef-anneal`.
        `ent_coef_programs` (traced; None: off) weighs the entropy of "run a program or not"
        (`--ent-coef-programs`)."""
        traj, advantages, targets = batch
        ent_coef = config.ent_coef if ent_coef is None else ent_coef
        logits, head = network.apply(params, traj.obs)
        log_prob = distribution.log_prob(logits, traj.mask, traj.action)
        log_ratio = log_prob - traj.log_prob
        ratio = jnp.exp(log_ratio)
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        clipped = jnp.clip(ratio, 1.0 - config.clip_eps, 1.0 + config.clip_eps)
        pg_loss = jnp.maximum(-advantages * ratio, -advantages * clipped).mean()
        # Taken on the head's own scale: the return itself, or its symlog (`--value-target`).
        vf_loss = 0.5 * jnp.mean((head - value_scale.to_head(targets)) ** 2)
        entropy = distribution.entropy(logits, traj.mask).mean()
        total = pg_loss + config.vf_coef * vf_loss - ent_coef * entropy
        extra = {}
        if ent_coef_programs is not None:
            # Averaged over every step like the entropy: steps without the choice add 0.
            program_entropy = distribution.group_entropy(logits, traj.mask, PROGRAM_ACTIONS)
            total = total - ent_coef_programs * program_entropy.mean()
            split = distribution.two_way_split(traj.mask, PROGRAM_ACTIONS)
            # Logged over the steps with the choice only, so it reads on the 0..ln 2 scale.
            extra["train/program_choice_entropy"] = jnp.sum(program_entropy) / jnp.maximum(
                jnp.sum(split), 1
            )
            extra["train/program_choice_steps"] = jnp.mean(split)
        return total, {
            **extra,
            "train/total_loss": total,
            "train/pg_loss": pg_loss,
            "train/vf_loss": vf_loss,
            "train/ent_loss": -entropy,
            "train/entropy": entropy,
            "train/approx_kl": jnp.mean((ratio - 1.0) - log_ratio),
            "train/clip_frac": jnp.mean(jnp.abs(ratio - 1.0) > config.clip_eps),
        }

    def minibatch_step(carry, indices):
        train_state, batch, ent_coef, ent_coef_programs = carry
        # This minibatch's rows are gathered here rather than a shuffled copy of
        # the whole batch being made per epoch: the same rows in the same order,
        # without writing and re-reading the 1.6 GB of observations at 2,048 x 128.
        minibatch = jax.tree_util.tree_map(
            lambda x: jnp.take(x, indices, axis=0, mode="clip"), batch
        )  # in range: no fill pass
        grads, losses = jax.grad(loss_fn, has_aux=True)(
            train_state.params, minibatch, ent_coef, ent_coef_programs
        )
        # The global norm before `max_grad_norm` clips it: how often and how hard the clip
        # bites (a large value loss on a shared trunk shows up here first).
        grad_norm = optax.global_norm(grads)
        losses = {
            **losses,
            "train/grad_norm": grad_norm,
            "train/grad_clipped_frac": (grad_norm > config.max_grad_norm).astype(jnp.float32),
        }
        new_state = train_state.apply_gradients(grads=grads)
        return (new_state, batch, ent_coef, ent_coef_programs), losses

    def epoch_step(carry, _):
        train_state, rng, batch, ent_coef, ent_coef_programs = carry
        rng, perm_key = jax.random.split(rng)
        permutation = jax.random.permutation(perm_key, batch_size)
        inner = (train_state, batch, ent_coef, ent_coef_programs)
        inner, losses = jax.lax.scan(
            minibatch_step, inner, permutation.reshape(num_minibatches, -1)
        )
        return (inner[0], rng, batch, ent_coef, ent_coef_programs), losses

    # ------------------------------------------------------------ one PPO update
    def rollout_metrics(traj: Transition):
        steps = traj.action.size
        metrics = {
            "train/mean_reward": (
                traj.reward if traj.env_reward is None else traj.env_reward
            ).mean(),
            "episode_return_sum": traj.completed_return.sum(),
            "episode_length_sum": traj.completed_length.sum().astype(jnp.float32),
            "train/num_episodes": traj.done.sum().astype(jnp.float32),
            "actions/move_frac": jnp.sum(traj.action < 4) / steps,
            "actions/siphon_frac": jnp.sum(traj.action == 4) / steps,
            "actions/program_frac": jnp.sum(traj.action >= 5) / steps,
            # How often siphon / some program could have been taken (health checks, §3.7).
            "actions/siphon_valid_frac": jnp.sum(traj.mask[..., 4]) / steps,
            "actions/program_valid_frac": jnp.sum(jnp.any(traj.mask[..., 5:], axis=-1)) / steps,
            # Summed stage at episode end: divided by num_episodes into stats/mean_final_stage.
            "final_stage_sum": jnp.sum(jnp.where(traj.done, traj.stage, 0)).astype(jnp.float32),
            "stats/highest_stage": traj.stage.max().astype(jnp.float32),
            "stats/empty_mask_steps": traj.empty_mask.sum().astype(jnp.float32),
        }
        if traj.env_reward is not None:  # --reward-weights / --program-bonus: what PPO trained on
            metrics["train/weighted_mean_reward"] = traj.reward.mean()
            metrics["weighted_return_sum"] = traj.completed_weighted_return.sum()
        if traj.program_bonus is not None:
            metrics["train/program_bonus"] = traj.program_bonus.mean()
        if traj.distance_retreat is not None:
            metrics["train/distance_retreat"] = traj.distance_retreat.mean()
        if traj.program_use_bonus is not None:
            metrics["train/program_use_bonus"] = traj.program_use_bonus.mean()
        if traj.spending_refund is not None:
            metrics["train/spending_refund"] = traj.spending_refund.mean()
        if traj.siphon_pay_moved is not None:
            metrics["train/siphon_pay_moved"] = traj.siphon_pay_moved.mean()
        if traj.truncated is not None:
            metrics["train/truncated_episodes"] = traj.truncated.sum().astype(jnp.float32)
        component_means = traj.components.mean(axis=(0, 1))
        for i, name in enumerate(reward_names):
            metrics[f"reward/{name}"] = component_means[i]
        return metrics

    def rollout(
        runner: RunnerState, env_params=env_params, reward_vector=None, program_levers=None
    ):
        """num_steps env steps; returns the runner after them, the trajectory and V(o_T)."""
        runner, traj = jax.lax.scan(
            lambda c, x: env_step(c, x, env_params, reward_vector, program_levers),
            runner,
            None,
            num_steps,
        )
        traj = keep_env_sharded(traj, time_env_sharding)
        _, last_head = network.apply(runner.train_state.params, runner.obs)
        return runner, traj, value_scale.to_value(last_head)

    def learn(
        train_state,
        epoch_key,
        traj: Transition,
        advantages,
        targets,
        ent_coef=None,
        ent_coef_programs=None,
    ):
        """`update_epochs` passes of shuffled minibatch Adam steps; the losses [epochs, mb].

        `ent_coef` (traced, `--ent-coef-anneal`) replaces `config.ent_coef`; None keeps the
        constant, so a run without the schedule compiles exactly as before. Likewise
        `ent_coef_programs` (`--ent-coef-programs`): None leaves the term out."""
        # Only what loss_fn reads goes into the minibatches (not rewards, metrics...).
        inputs = LossInputs(
            obs=traj.obs, mask=traj.mask, action=traj.action, log_prob=traj.log_prob
        )
        flat = jax.tree_util.tree_map(
            lambda x: x.reshape((batch_size,) + x.shape[2:]), (inputs, advantages, targets)
        )
        carry = (train_state, epoch_key, flat, ent_coef, ent_coef_programs)
        carry, losses = jax.lax.scan(epoch_step, carry, None, config.update_epochs)
        return carry[0], losses

    def update(
        runner: RunnerState,
        env_params=env_params,
        reward_vector=None,
        ent_coef=None,
        program_levers=None,
    ):
        runner, traj, last_value = rollout(runner, env_params, reward_vector, program_levers)
        advantages, targets = compute_gae(traj, last_value)
        rng, epoch_key = jax.random.split(runner.rng)
        ent_coef_programs = None
        if config.ent_coef_programs:  # a program lever: off before the levers' update
            switch = 1.0 if program_levers is None else program_levers
            ent_coef_programs = jnp.float32(config.ent_coef_programs) * switch
        train_state, losses = learn(
            runner.train_state, epoch_key, traj, advantages, targets, ent_coef, ent_coef_programs
        )

        metrics = {k: v.mean() for k, v in losses.items()}
        metrics.update(rollout_metrics(traj))
        return runner._replace(train_state=train_state, rng=rng), metrics

    # -------------------------------------------------------------------- chunk
    def train_chunk(
        runner: RunnerState,
        num_active,
        env_params=env_params,
        reward_vector=None,
        ent_coef=None,
        program_levers=None,
    ):
        """`log_interval` updates; those at index >= num_active are skipped.

        Skipping (instead of compiling a shorter chunk) runs a remainder with
        the same compiled function (§2.8). `env_params`, `reward_vector`
        (f32[15], `--reward-weights-anneal`), `ent_coef` (f32[],
        `--ent-coef-anneal`) and `program_levers` (f32[] 0 or 1,
        `--program-levers-from-update`) are traced: a new curriculum
        probability, weight, coefficient or switch each chunk does not
        recompile (§1.7, §1.1).
        """

        # Jitted so the shapes below and the cond trace the update (and the game's step
        # inside it) once, not twice: tracing is much of a compile (XLA inlines the call).
        @jax.jit
        def run_update(r):
            return update(r, env_params, reward_vector, ent_coef, program_levers)

        metric_shapes = jax.eval_shape(lambda r: run_update(r)[1], runner)

        def skip(r):
            return r, jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), metric_shapes)

        def body(r, index):
            return jax.lax.cond(index < num_active, run_update, skip, r)

        return jax.lax.scan(body, runner, jnp.arange(config.log_interval))

    jitted_chunk = jax.jit(train_chunk, donate_argnums=(0,))
    # The update's phases, unjitted, for profiling (python/scripts/profile_train.py).
    phases = {
        "env_step": env_step,
        "rollout": rollout,
        "compute_gae": compute_gae,
        "loss_fn": loss_fn,
        "learn": learn,
        "rollout_metrics": rollout_metrics,
        "update": update,
    }
    return Trainer(
        config=config,
        network=network,
        optimizer=optimizer,
        init=init,
        train_chunk=jitted_chunk,
        env_sharding=env_sharding,
        replicated=replicated,
        reward_names=reward_names,
        phases=phases,
    )


def place_runner_state(trainer: Trainer, runner: RunnerState) -> RunnerState:
    """Put a (possibly host-loaded) runner state onto the trainer's shardings."""
    env_state, obs, episode_return, episode_length = jax.device_put(
        (runner.env_state, runner.obs, runner.episode_return, runner.episode_length),
        trainer.env_sharding,
    )
    return RunnerState(
        train_state=jax.device_put(runner.train_state, trainer.replicated),
        env_state=env_state,
        obs=obs,
        episode_return=episode_return,
        episode_length=episode_length,
        rng=jax.device_put(runner.rng, trainer.replicated),
        weighted_episode_return=jax.device_put(
            runner.weighted_episode_return, trainer.env_sharding
        ),
        program_used=jax.device_put(runner.program_used, trainer.env_sharding),
    )


__all__ = [
    "make_train",
    "make_mesh",
    "make_optimizer",
    "make_program_bonus",
    "make_spending_refund",
    "make_siphon_pay_on_use",
    "make_retreat_charge",
    "make_reward_weighting",
    "ent_coef_at",
    "program_levers_at",
    "reward_anneal_progress",
    "reward_weight_vector",
    "reward_weights_at",
    "owned_program_count",
    "place_runner_state",
    "RunnerState",
    "Trainer",
    "Transition",
    "NUM_ACTIONS",
    "OBS_SIZE",
]
