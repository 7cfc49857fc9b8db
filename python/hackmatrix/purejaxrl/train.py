"""Action-masked PPO in the PureJaxRL style (training.md §2).

`make_train(config, env)` builds the whole algorithm as pure functions:

    rollout  (lax.scan over num_steps, vmap over envs)
    GAE      (reverse lax.scan over time)
    epochs   (lax.scan) of minibatches (lax.scan) of Adam steps

and wraps `log_interval` updates into one jitted *chunk* (§2.8). State is
created outside jit by `init`, so a resume can replace any part of it.
With a device mesh the env batch is sharded over devices (data parallel);
parameters are replicated and XLA inserts the gradient all-reduce.

The reward PPO trains on is the env's own, shaped by the layer in `shaping/`
(one shaper per lever); settings that move during a run are schedules
(`levers.py`), fed to each update of a chunk as traced inputs.

An algorithm is two parts: how the envs act (`act -> Acted`) and the loss with the
rollout fields it reads. PPO's are here; `--algorithm expert-iteration` swaps in those
of `expert_iteration.py` (acting by search, the loss to its improved policy), and
everything else above is shared (training.md §2.10).
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

from ..names import FIRST_PROGRAM_ACTION
from . import curriculum_flags, distribution, levers, restarts, shaping
from .autoreset import make_auto_reset
from .config import EXPERT_ITERATION, TrainConfig
from .network import NUM_ACTIONS, OBS_SIZE, make_network, value_only_layers
from .schedule import Schedule
from .value_target import make_value_scale

# The program actions (one per program), for `--ent-coef-programs`'s two-way choice.
PROGRAM_ACTIONS = np.arange(NUM_ACTIONS) >= FIRST_PROGRAM_ACTION

ENV_AXIS = "envs"


class RunnerState(NamedTuple):
    """Everything one update reads and writes."""

    train_state: TrainState
    env_state: Any
    obs: jnp.ndarray  # f32[E, 1545]: the observation the next action is chosen from
    episode_return: jnp.ndarray  # f32[E]: running return of the current episode
    episode_length: jnp.ndarray  # i32[E]: steps taken in the current episode
    rng: jnp.ndarray
    # f32[E]: running return of the shaped reward PPO trains on; None when it trains on the
    # env's reward as is (no shaper active)
    weighted_episode_return: Any
    # {shaper name: its per-env carry}, e.g. program_use_bonus: bool[E] "paid this episode"
    shaping_carry: Any = None
    # With --restart-share: the ring of remembered late states (restarts.Restarts); else None
    restarts: Any = None


class Transition(NamedTuple):
    obs: jnp.ndarray  # o_t, the observation a_t was chosen from
    action: jnp.ndarray
    reward: jnp.ndarray  # the reward PPO trains on (shaped when a shaper is active)
    done: jnp.ndarray
    log_prob: jnp.ndarray
    value: jnp.ndarray
    mask: jnp.ndarray  # the mask used for sampling a_t
    completed_return: jnp.ndarray  # episode return if the episode ended here, else 0
    completed_length: jnp.ndarray  # episode length if the episode ended here, else 0
    empty_mask: jnp.ndarray
    components: jnp.ndarray  # f32[15] reward components, canonical order
    stage: jnp.ndarray
    # With a shaper active: the env's own reward and the shaped episode returns; else None.
    env_reward: Any
    completed_weighted_return: Any
    # {metric name: f32[E]} each additive shaper's term ({} without shaping)
    shaping_terms: Any
    # With --max-episode-steps: bool[E] the step ended the episode by the time limit (`done`
    # is then also true) and f32[E] V(last observation) there, 0 elsewhere; else None.
    truncated: Any = None
    truncation_value: Any = None
    # With --algorithm expert-iteration: the step's search (expert_iteration.SearchStep),
    # whose improved policy is the policy target; else None.
    search: Any = None
    # With --restart-share: bool[E] an episode that began at a reset ended here (episode
    # statistics count these only) and bool[E] the env's next game is a restart; else None.
    counted: Any = None
    restarted: Any = None
    # With --restart-advantages apart: bool[E] the step's game began at a restart; else None.
    restart_origin: Any = None


class Acted(NamedTuple):
    """How the envs acted on one step: the actions and what the learner keeps of them."""

    action: jnp.ndarray  # i32[E]
    empty: jnp.ndarray  # bool[E]: no legal action (action 0 was taken, and counted)
    log_prob: jnp.ndarray  # f32[E]: the network's log-probability of the action
    value: jnp.ndarray  # f32[E]: the network's V(o_t), in return units
    search: Any = None  # expert iteration's SearchStep; None for PPO


class LossInputs(NamedTuple):
    """The per-step fields of a Transition that the PPO loss reads."""

    obs: jnp.ndarray
    mask: jnp.ndarray
    action: jnp.ndarray
    log_prob: jnp.ndarray
    restart_origin: Any = None  # with --restart-advantages apart (Transition's)


class Trainer(NamedTuple):
    """The pieces `make_train` builds; see the module docstring."""

    config: TrainConfig
    network: Any
    optimizer: Any
    init: Any  # (rng) -> RunnerState
    train_chunk: Any  # jitted (RunnerState, num_active, inputs) -> (RunnerState, metrics)
    chunk_inputs: Any  # (first_update) -> the chunk's per-update inputs (levers.chunk_inputs)
    env_sharding: Any  # sharding for arrays whose leading axis is the env batch
    replicated: Any
    reward_names: tuple
    phases: dict  # the update's unjitted phase functions by name (profiling)
    schedules: dict  # {input name: Schedule} of the settings that move


class _Parts(NamedTuple):
    """What the phase builders below share."""

    config: TrainConfig
    env: ModuleType
    env_params: Any
    network: Any
    value_scale: Any
    optimizer: Any
    shapers: tuple
    reward_names: tuple
    fixed_weights: Any  # f32[15] constant weights (unscheduled), or None
    env_sharding: Any
    time_env_sharding: Any
    replicated: Any

    def keep_env_sharded(self, tree, sharding=None):
        sharding = self.env_sharding if sharding is None else sharding
        return jax.tree_util.tree_map(lambda x: jax.lax.with_sharding_constraint(x, sharding), tree)

    def levers(self, inputs: dict) -> shaping.Levers:
        """The shapers' settings for one update's inputs (constants where none move)."""
        return shaping.Levers(
            weights=inputs.get("weights", self.fixed_weights),
            program_levers=inputs.get("program_levers"),
            search_select=inputs.get("search_select"),
        )


# Kept for callers that weigh components by name (the CLI's checks, tests).
reward_weight_vector = levers.weight_vector


def ent_coef_at(config: TrainConfig, update: int) -> float:
    """The entropy coefficient in force at `update` (its schedule, training.md §1.1)."""
    return float(levers.ent_coef_schedule(config).at(update, config.num_updates))


def program_levers_at(config: TrainConfig, update: int) -> float:
    """1 when the program levers act at `update`, 0 before `--program-levers-from-update`."""
    return levers.switched_on(levers.program_levers_schedule(config), update, config.num_updates)


def search_select_at(config: TrainConfig, update: int) -> float:
    """1 when `--search-select` picks the searched envs at `update`, 0 before
    `--search-select-from-update` (the first envs are searched)."""
    return levers.switched_on(levers.search_select_schedule(config), update, config.num_updates)


def value_only_at(config: TrainConfig, update: int) -> float:
    """1 while `--value-warmup-updates` lets only the value head move, 0 after."""
    schedule = levers.value_warmup_schedule(config)
    return 0.0 if schedule is None else float(schedule.at(update, config.num_updates))


def reward_anneal_progress(config: TrainConfig, update: int) -> float:
    """How far `--reward-weights-anneal` has moved the weights toward their end at `update`
    (0 without the flag)."""
    if config.reward_weights_anneal is None:
        return 0.0
    return Schedule.linear(0.0, 1.0, config.reward_weights_anneal).progress(
        update, config.num_updates
    )


def reward_weights_at(config: TrainConfig, update: int) -> dict[str, float] | None:
    """The weights in force at `update`, by the names given in either flag."""
    if config.reward_weights is None:
        return None
    final = config.reward_weights_final or {}
    names = list(config.reward_weights) + [n for n in final if n not in config.reward_weights]
    schedule = levers.weights_schedule(config, names)
    assert schedule is not None
    return dict(zip(names, (float(w) for w in schedule.at(update, config.num_updates))))


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
    reward_names = tuple(env.REWARD_COMPONENT_NAMES)
    parts = _Parts(
        config=config,
        env=env,
        env_params=env_params,
        network=make_network(
            config.hidden_dim, config.num_layers, config.bf16, config.network, config.value_trunk
        ),
        # `--value-target`: V in return units from the head, and the head's target from a return.
        value_scale=make_value_scale(config.value_target),
        optimizer=make_optimizer(config),
        shapers=shaping.build(config, reward_names),
        reward_names=reward_names,
        fixed_weights=None
        if config.reward_weights is None
        else levers.weight_vector(config.reward_weights, reward_names),
        env_sharding=NamedSharding(mesh, P(ENV_AXIS)),
        time_env_sharding=NamedSharding(mesh, P(None, ENV_AXIS)),
        replicated=NamedSharding(mesh, P()),
    )
    curriculum = curriculum_flags.resolve(config)
    schedules = levers.run_schedules(config, reward_names, curriculum)

    def chunk_inputs(first_update: int) -> dict[str, Any]:
        return levers.chunk_inputs(
            schedules, first_update, config.log_interval, config.num_updates, env, curriculum
        )

    loss_inputs: Callable[[Transition], Any]
    if config.algorithm == EXPERT_ITERATION:  # the search is imported only for it (mctx)
        from . import expert_iteration

        act = expert_iteration.make_act(parts, config, env)
        loss_fn = expert_iteration.make_loss(config, parts.network, parts.value_scale)
        loss_inputs = expert_iteration.make_loss_inputs(config)
    else:
        act, loss_fn, loss_inputs = _make_policy_act(parts), _make_loss(parts), ppo_loss_inputs
    env_step = _make_env_step(parts, act)
    compute_gae = _make_gae(config)
    learn = _make_learn(parts, loss_fn, loss_inputs)
    rollout = _make_rollout(parts, env_step)
    update = _make_update(parts, rollout, compute_gae, learn)
    phases = {
        "env_step": env_step,
        "rollout": rollout,
        "compute_gae": compute_gae,
        "loss_fn": loss_fn,
        "learn": learn,
        "rollout_metrics": lambda traj: rollout_metrics(traj, reward_names),
        "update": update,
    }
    return Trainer(
        config=config,
        network=parts.network,
        optimizer=parts.optimizer,
        init=_make_init(parts),
        train_chunk=jax.jit(_make_chunk(config, update), donate_argnums=(0,)),
        chunk_inputs=chunk_inputs,
        env_sharding=parts.env_sharding,
        replicated=parts.replicated,
        reward_names=reward_names,
        phases=phases,
        schedules=schedules,
    )


def _make_init(parts: _Parts):
    config, env = parts.config, parts.env
    num_envs = config.num_envs
    v_reset = jax.vmap(env.reset, in_axes=(0, None))

    def init(rng) -> RunnerState:
        rng, net_key, reset_key = jax.random.split(rng, 3)
        params = parts.network.init(net_key, jnp.zeros((1, OBS_SIZE), jnp.float32))
        train_state = TrainState.create(
            apply_fn=parts.network.apply, params=params, tx=parts.optimizer
        )
        # An int32 step, not a weakly typed Python 0: a runner restored from a checkpoint has
        # the same types, so a resume in this process reuses the compiled chunk.
        train_state = train_state.replace(step=jnp.zeros((), jnp.int32))
        reset = jax.jit(v_reset, out_shardings=parts.env_sharding)
        obs, env_state = reset(jax.random.split(reset_key, num_envs), parts.env_params)

        def per_env(x):
            return jax.device_put(x, parts.env_sharding)

        ring = None
        if config.restart_share > 0:
            ring = restarts.init(env_state, config.restart_buffer)
            ring = ring._replace(restarted=per_env(ring.restarted))
        return RunnerState(
            train_state=jax.device_put(train_state, parts.replicated),
            env_state=env_state,
            obs=obs,
            episode_return=per_env(jnp.zeros(num_envs, jnp.float32)),
            episode_length=per_env(jnp.zeros(num_envs, jnp.int32)),
            rng=jax.device_put(rng, parts.replicated),
            weighted_episode_return=per_env(jnp.zeros(num_envs, jnp.float32))
            if parts.shapers
            else None,
            shaping_carry=per_env(shaping.init_carries(parts.shapers, num_envs)),
            restarts=ring,
        )

    return init


def _make_policy_act(parts: _Parts):
    """PPO's acting: a sample from the network's masked policy."""
    network, value_scale = parts.network, parts.value_scale

    def act(params, runner: RunnerState, mask, key, levers) -> Acted:
        del levers  # the network alone decides
        logits, head = network.apply(params, runner.obs)
        value = value_scale.to_value(head)
        action, empty = distribution.sample(key, logits, mask)
        log_prob = distribution.log_prob(logits, mask, action)
        return Acted(action, empty, log_prob, value)

    return act


def _make_env_step(parts: _Parts, act):
    """One batched env step: act (`act(params, runner, mask, key, levers) -> Acted`, the
    levers being the shapers' settings in force), step, truncate, auto-reset, shape the
    reward."""
    config, env, network, value_scale = parts.config, parts.env, parts.network, parts.value_scale
    num_envs, max_episode_steps = config.num_envs, config.max_episode_steps  # 0: no limit
    v_step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    v_mask = jax.vmap(env.action_mask)
    auto_reset = make_auto_reset(env, parts.env_params, num_envs)
    sharded = parts.keep_env_sharded

    def env_step(runner: RunnerState, inputs: dict):
        params = runner.train_state.params
        env_params = inputs.get("env_params", parts.env_params)
        rng, act_key, step_key, reset_key = jax.random.split(runner.rng, 4)

        mask = v_mask(runner.env_state)
        acted = act(params, runner, mask, act_key, parts.levers(inputs))
        action = acted.action

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
        components = jnp.stack([info["reward_components"][n] for n in parts.reward_names], -1)
        stepped_state = next_state
        # Auto-reset with its own keys; the carried obs is the post-reset one.
        next_state, next_obs = auto_reset(reset_key, done, next_state, next_obs, env_params)
        ring, counted, restarted, restart_origin = runner.restarts, None, None, None
        if ring is not None:  # --restart-share: remember a late state, restart some games
            if config.restart_advantages == "apart":
                restart_origin = ring.restarted  # this step's game, before any restart below
            remember_key, restart_key = jax.random.split(jax.random.fold_in(reset_key, 1))
            late = ~done & (stepped_state.stage >= config.restart_min_stage)
            counted = done & ~ring.restarted
            ring = restarts.remember(ring, remember_key, stepped_state, late)
            ring, next_state, next_obs, restarted = restarts.restart(
                ring, restart_key, done, next_state, next_obs, config.restart_share, env
            )
        ended = done if counted is None else counted  # the episodes the statistics count

        terms: dict[str, jax.Array] = {}
        trained, carries = reward, runner.shaping_carry
        completed_weighted, weighted_return = None, None
        if parts.shapers:
            facts = shaping.StepFacts(action, reward, components, done, info)
            trained, terms, carries = shaping.shape(
                parts.shapers, facts, runner.shaping_carry, parts.levers(inputs)
            )
            weighted_return = runner.weighted_episode_return + trained
            completed_weighted = jnp.where(ended, weighted_return, 0.0)
            weighted_return = sharded(jnp.where(done, 0.0, weighted_return))
        transition = Transition(
            obs=runner.obs,
            action=action,
            reward=trained,
            done=done,
            log_prob=acted.log_prob,
            value=acted.value,
            mask=mask,
            completed_return=jnp.where(ended, episode_return, 0.0),
            completed_length=jnp.where(ended, episode_length, 0),
            empty_mask=acted.empty,
            components=components,
            stage=info["stage"],
            env_reward=reward if parts.shapers else None,
            completed_weighted_return=completed_weighted,
            shaping_terms=terms,
            truncated=truncated,
            truncation_value=truncation_value,
            search=acted.search,
            counted=counted,
            restarted=restarted,
            restart_origin=restart_origin,
        )
        new_runner = runner._replace(
            env_state=sharded(next_state),
            obs=sharded(next_obs),
            episode_return=sharded(jnp.where(done, 0.0, episode_return)),
            episode_length=sharded(jnp.where(done, 0, episode_length)),
            weighted_episode_return=weighted_return,
            rng=rng,
            shaping_carry=sharded(carries),
            restarts=ring,
        )
        return new_runner, transition

    return env_step


def _make_gae(config: TrainConfig):
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

    return compute_gae


def program_choice_bonus(logits, mask, ent_coef_programs):
    """`--ent-coef-programs`' term (what the loss subtracts) and its two metrics."""
    # Averaged over every step like the entropy: steps without the choice add 0.
    program_entropy = distribution.group_entropy(logits, mask, PROGRAM_ACTIONS)
    split = distribution.two_way_split(mask, PROGRAM_ACTIONS)
    metrics = {
        # Logged over the steps with the choice only, so it reads on the 0..ln 2 scale.
        "train/program_choice_entropy": jnp.sum(program_entropy) / jnp.maximum(jnp.sum(split), 1),
        "train/program_choice_steps": jnp.mean(split),
    }
    return ent_coef_programs * program_entropy.mean(), metrics


def add_value_and_entropy(
    policy_loss, logits, head, mask, targets, *, config, value_scale, ent_coef, ent_coef_programs
):
    """Every algorithm's loss past its policy term: the value loss, the entropy bonus and
    `--ent-coef-programs`' term. Returns (total, metrics) with the shared metrics."""
    # Taken on the head's own scale: the return itself, or its symlog (`--value-target`).
    vf_loss = 0.5 * jnp.mean((head - value_scale.to_head(targets)) ** 2)
    entropy = distribution.entropy(logits, mask).mean()
    total = policy_loss + config.vf_coef * vf_loss - ent_coef * entropy
    extra = {}
    if ent_coef_programs is not None:
        bonus, extra = program_choice_bonus(logits, mask, ent_coef_programs)
        total = total - bonus
    return total, {
        **extra,
        "train/total_loss": total,
        "train/vf_loss": vf_loss,
        "train/ent_loss": -entropy,
        "train/entropy": entropy,
    }


def _make_loss(parts: _Parts):
    config, network, value_scale = parts.config, parts.network, parts.value_scale

    def loss_fn(params, batch, ent_coef=None, ent_coef_programs=None):
        """`ent_coef` (traced) replaces `config.ent_coef`, for its schedule.
        `ent_coef_programs` (traced; None: off) weighs the entropy of "run a program or not"
        (`--ent-coef-programs`)."""
        traj, advantages, targets = batch
        ent_coef = config.ent_coef if ent_coef is None else ent_coef
        logits, head = network.apply(params, traj.obs)
        pg_loss, surrogate_metrics = clipped_surrogate(logits, traj, advantages, config.clip_eps)
        total, shared = add_value_and_entropy(
            pg_loss,
            logits,
            head,
            traj.mask,
            targets,
            config=config,
            value_scale=value_scale,
            ent_coef=ent_coef,
            ent_coef_programs=ent_coef_programs,
        )
        return total, {**shared, **surrogate_metrics}

    return loss_fn


def clipped_surrogate(logits, inputs, advantages, clip_eps: float):
    """PPO's clipped policy-gradient loss of a minibatch (`inputs`: its mask, actions and
    their log-probabilities at acting time) and its metrics (pg_loss, approx_kl, clip_frac).
    The advantages are normalised over the minibatch."""
    log_prob = distribution.log_prob(logits, inputs.mask, inputs.action)
    log_ratio = log_prob - inputs.log_prob
    ratio = jnp.exp(log_ratio)
    advantages = normalised_advantages(advantages, getattr(inputs, "restart_origin", None))
    clipped = jnp.clip(ratio, 1.0 - clip_eps, 1.0 + clip_eps)
    pg_loss = jnp.maximum(-advantages * ratio, -advantages * clipped).mean()
    return pg_loss, {
        "train/pg_loss": pg_loss,
        "train/approx_kl": jnp.mean((ratio - 1.0) - log_ratio),
        "train/clip_frac": jnp.mean(jnp.abs(ratio - 1.0) > clip_eps),
    }


def normalised_advantages(advantages, restart_origin=None):
    """A minibatch's advantages at mean 0 and spread 1: over all its steps, or with
    `restart_origin` (bool, `--restart-advantages apart`) the steps of restarted games and
    of the others each over their own, so neither group's spread sets the other's scale."""
    if restart_origin is None:
        return (advantages - advantages.mean()) / (advantages.std() + 1e-8)

    def within(group):
        count = jnp.maximum(group.sum(), 1)
        mean = jnp.sum(jnp.where(group, advantages, 0.0)) / count
        spread = jnp.sqrt(jnp.sum(jnp.where(group, (advantages - mean) ** 2, 0.0)) / count)
        return (advantages - mean) / (spread + 1e-8)

    return jnp.where(restart_origin, within(restart_origin), within(~restart_origin))


def ppo_loss_inputs(traj: Transition) -> LossInputs:
    """What PPO's loss reads of a rollout (nothing else goes into the minibatches)."""
    return LossInputs(
        obs=traj.obs,
        mask=traj.mask,
        action=traj.action,
        log_prob=traj.log_prob,
        restart_origin=traj.restart_origin,
    )


def _make_learn(parts: _Parts, loss_fn, loss_inputs):
    """`loss_inputs(traj)`: the fields of a rollout that `loss_fn` reads."""
    config = parts.config
    batch_size, num_minibatches = config.batch_size, config.num_minibatches

    def minibatch_step(carry, indices):
        train_state, batch, ent_coef, ent_coef_programs, value_only = carry
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
        if value_only is None:
            new_state = train_state.apply_gradients(grads=grads)
        else:
            new_state = apply_gradients_value_only(train_state, grads, value_only)
        return (new_state, batch, ent_coef, ent_coef_programs, value_only), losses

    def epoch_step(carry, _):
        train_state, rng, batch, ent_coef, ent_coef_programs, value_only = carry
        rng, perm_key = jax.random.split(rng)
        permutation = jax.random.permutation(perm_key, batch_size)
        inner = (train_state, batch, ent_coef, ent_coef_programs, value_only)
        inner, losses = jax.lax.scan(
            minibatch_step, inner, permutation.reshape(num_minibatches, -1)
        )
        return (inner[0], rng, batch, ent_coef, ent_coef_programs, value_only), losses

    def learn(
        train_state,
        epoch_key,
        traj: Transition,
        advantages,
        targets,
        ent_coef=None,
        ent_coef_programs=None,
        value_only=None,
    ):
        """`update_epochs` passes of shuffled minibatch Adam steps; the losses [epochs, mb].

        `ent_coef` (traced, scheduled) replaces `config.ent_coef`; None keeps the constant.
        Likewise `ent_coef_programs` (`--ent-coef-programs`): None leaves the term out, and
        `value_only` (`--value-warmup-updates`, 1 or 0): None moves every parameter."""
        # Only what loss_fn reads goes into the minibatches (not rewards, metrics...).
        inputs = loss_inputs(traj)
        flat = jax.tree_util.tree_map(
            lambda x: x.reshape((batch_size,) + x.shape[2:]), (inputs, advantages, targets)
        )
        carry = (train_state, epoch_key, flat, ent_coef, ent_coef_programs, value_only)
        carry, losses = jax.lax.scan(epoch_step, carry, None, config.update_epochs)
        return carry[0], losses

    return learn


def apply_gradients_value_only(train_state: TrainState, grads, value_only) -> TrainState:
    """One optimizer step in which, while `value_only` is 1, only the layers the value alone
    reads move (its head, and a separate value trunk).

    The optimizer sees every gradient as usual (its moments stay warm for the switch); its
    step is dropped on the other layers, which keep their values bit for bit."""
    updates, opt_state = train_state.tx.update(grads, train_state.opt_state, train_state.params)
    value_layers = value_only_layers(train_state.params)
    frozen = value_only > 0
    layer_updates = {
        name: layer
        if name in value_layers
        else jax.tree_util.tree_map(lambda u: jnp.where(frozen, jnp.zeros_like(u), u), layer)
        for name, layer in updates["params"].items()
    }
    new_params = optax.apply_updates(train_state.params, {**updates, "params": layer_updates})
    return train_state.replace(step=train_state.step + 1, params=new_params, opt_state=opt_state)


def rollout_metrics(traj: Transition, reward_names: Sequence[str]) -> dict[str, jax.Array]:
    """The per-update metrics read from a rollout's transitions (training.md §3)."""
    steps = traj.action.size
    ended = traj.done if traj.counted is None else traj.counted  # restarts are not counted
    metrics = {
        "train/mean_reward": (traj.reward if traj.env_reward is None else traj.env_reward).mean(),
        "episode_return_sum": traj.completed_return.sum(),
        "episode_length_sum": traj.completed_length.sum().astype(jnp.float32),
        "train/num_episodes": ended.sum().astype(jnp.float32),
        "actions/move_frac": jnp.sum(traj.action < 4) / steps,
        "actions/siphon_frac": jnp.sum(traj.action == 4) / steps,
        "actions/program_frac": jnp.sum(traj.action >= 5) / steps,
        # How often siphon / some program could have been taken (health checks, §3.7).
        "actions/siphon_valid_frac": jnp.sum(traj.mask[..., 4]) / steps,
        "actions/program_valid_frac": jnp.sum(jnp.any(traj.mask[..., 5:], axis=-1)) / steps,
        # Summed stage at episode end: divided by num_episodes into stats/mean_final_stage.
        "final_stage_sum": jnp.sum(jnp.where(ended, traj.stage, 0)).astype(jnp.float32),
        "stats/highest_stage": traj.stage.max().astype(jnp.float32),
        "stats/empty_mask_steps": traj.empty_mask.sum().astype(jnp.float32),
    }
    if traj.env_reward is not None:  # a shaped reward: what PPO trained on
        metrics["train/weighted_mean_reward"] = traj.reward.mean()
        metrics["weighted_return_sum"] = traj.completed_weighted_return.sum()
    for name, term in traj.shaping_terms.items():
        metrics[f"train/{name}"] = term.mean()
    if traj.truncated is not None:
        metrics["train/truncated_episodes"] = traj.truncated.sum().astype(jnp.float32)
    if traj.restarted is not None:
        metrics["restarts/games"] = traj.restarted.sum().astype(jnp.float32)
        metrics["restarts/finished_games"] = traj.done.sum().astype(jnp.float32)
    if traj.search is not None:
        from .expert_iteration import search_metrics

        metrics.update(search_metrics(traj.search))
    component_means = traj.components.mean(axis=(0, 1))
    for i, name in enumerate(reward_names):
        metrics[f"reward/{name}"] = component_means[i]
    return metrics


def _make_rollout(parts: _Parts, env_step):
    network, value_scale = parts.network, parts.value_scale

    def rollout(runner: RunnerState, inputs: dict | None = None):
        """num_steps env steps under one update's `inputs`; returns the runner after them,
        the trajectory and V(o_T)."""
        inputs = {} if inputs is None else inputs
        runner, traj = jax.lax.scan(
            lambda c, _: env_step(c, inputs), runner, None, parts.config.num_steps
        )
        traj = parts.keep_env_sharded(traj, parts.time_env_sharding)
        _, last_head = network.apply(runner.train_state.params, runner.obs)
        return runner, traj, value_scale.to_value(last_head)

    return rollout


def _make_update(parts: _Parts, rollout, compute_gae, learn):
    config = parts.config

    def update(runner: RunnerState, inputs: dict | None = None):
        """One PPO update under `inputs` (one row of the chunk's scheduled inputs)."""
        inputs = {} if inputs is None else inputs
        runner, traj, last_value = rollout(runner, inputs)
        advantages, targets = compute_gae(traj, last_value)
        rng, epoch_key = jax.random.split(runner.rng)
        ent_coef_programs = None
        if config.ent_coef_programs:  # a program lever: off before the levers' update
            switch = inputs.get("program_levers", 1.0)
            ent_coef_programs = jnp.float32(config.ent_coef_programs) * switch
        train_state, losses = learn(
            runner.train_state,
            epoch_key,
            traj,
            advantages,
            targets,
            inputs.get("ent_coef"),
            ent_coef_programs,
            inputs.get("value_only"),
        )
        metrics = {k: v.mean() for k, v in losses.items()}
        metrics.update(rollout_metrics(traj, parts.reward_names))
        if runner.restarts is not None:
            metrics["restarts/remembered"] = restarts.held(runner.restarts).astype(jnp.float32)
        return runner._replace(train_state=train_state, rng=rng), metrics

    return update


def _make_chunk(config: TrainConfig, update):
    def train_chunk(runner: RunnerState, num_active, inputs: dict | None = None):
        """`log_interval` updates; those at index >= num_active are skipped.

        Skipping (instead of compiling a shorter chunk) runs a remainder with the same
        compiled function (§2.8). `inputs` holds one row per update of every scheduled
        setting (`Trainer.chunk_inputs`): traced, so a new value does not recompile.
        """
        inputs = {} if inputs is None else inputs

        # Jitted so the shapes below and the cond trace the update (and the game's step
        # inside it) once, not twice: tracing is much of a compile (XLA inlines the call).
        @jax.jit
        def run_update(r, row):
            return update(r, row)

        first_row = jax.tree_util.tree_map(lambda x: x[0], inputs)
        metric_shapes = jax.eval_shape(lambda r: run_update(r, first_row)[1], runner)

        def skip(r, _row):
            return r, jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), metric_shapes)

        def body(r, xs):
            index, row = xs
            return jax.lax.cond(index < num_active, run_update, skip, r, row)

        return jax.lax.scan(body, runner, (jnp.arange(config.log_interval), inputs))

    return train_chunk


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
        shaping_carry=jax.device_put(runner.shaping_carry, trainer.env_sharding),
        restarts=runner.restarts,
    )


__all__ = [
    "make_train",
    "make_mesh",
    "make_optimizer",
    "ent_coef_at",
    "program_levers_at",
    "search_select_at",
    "reward_anneal_progress",
    "reward_weight_vector",
    "reward_weights_at",
    "rollout_metrics",
    "place_runner_state",
    "RunnerState",
    "Trainer",
    "Transition",
    "NUM_ACTIONS",
    "OBS_SIZE",
]
