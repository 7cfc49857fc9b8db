"""Gumbel MuZero search over the JAX engine at play time (specs/search.md §3).

At every decision each game draws `num_roots` roots with the fair sampler
(sampler.py), searches each with `mctx.gumbel_muzero_policy` (Danihelka et
al. 2022), the engine as the model and a trained network's policy and value
as prior and leaf value, and averages the roots' results into one action.

- The model: `recurrent_fn` steps the engine (`jax_env.step.step_state`);
  the reward is the env's reward; the discount is `discount`, and 0 on the
  step that ends the game (and after it).
- Invalid actions: at the root the real action mask (which the env shows
  every agent) marks them for mctx; inside the tree each node's own mask sets
  their prior logits to `distribution.MASKED_LOGIT`, so they are never chosen.
- UNDO (specs/search.md §3.3): with `honest_undo` an UNDO in the tree gives
  back what the env pays again after it (a data-siphon pickup, kills, the
  exit-distance shaping), so a loop of UNDO costs its step penalties instead
  of paying a reward over and over; `undo_cap` can also bound the UNDOs on
  one path.
- The network's value is in return units: `value_target="symlog"` maps the
  head through symexp first (purejaxrl/value_target.py).
- The tree's reward (specs/search.md §3.4): the env's reward, or with a
  `TreeReward` the reward the network's value head was trained on (the
  trainer's shaped reward, `purejaxrl.shaping`), so that a step's reward and
  the value after it are one quantity.
- Leaf rollouts (specs/search.md §3.6): with `leaf_rollout = K` a node's value
  is K steps of the network's own greedy play from it, their discounted
  rewards, then the network's value where the walk stops (an n-step return),
  instead of the value alone.

Every game's search is a function of its own key and state only (the batch
is a `vmap` over games), so a game replays the same whatever else is played
beside it. Use `Searcher` (or `SearchChooser` inside a jitted game loop).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import mctx
import numpy as np
from flax import struct

from ..jax_env.constants import DATA_SIPHON, FIRST_PROGRAM_ACTION, NUM_ACTIONS, RUNNING, UNDO
from ..jax_env.mask import action_mask
from ..jax_env.observation import flatten_observation, observe
from ..jax_env.state import Board, EnvState
from ..jax_env.step import step_state
from ..purejaxrl import distribution, shaping
from ..purejaxrl.config import CONFIG_FLAGS, SEARCH_TREE_REWARDS, TrainConfig
from . import sampler

UNDO_ACTION = FIRST_PROGRAM_ACTION + UNDO
SELECTIONS = ("greedy", "sample", "halving")
AGGREGATES = ("weights", "q")
ROOTS = ("fair", "reseed")
VALUE_TARGETS = ("raw", "symlog")
TREE_REWARDS = SEARCH_TREE_REWARDS  # what a search's tree adds (§3.4): one list, config's
MCTX_C_SCALE = 0.1  # mctx's default value_scale of qtransform_completed_by_mix_value
# What the env pays again after an UNDO restores what was taken (rewards.md §4).
DATA_SIPHON_REWARD = 1.0
KILL_REWARD = 0.3
DISTANCE_REWARD = 0.05


@dataclass(frozen=True)
class TreeReward:
    """The reward the tree adds when it is a trainer's shaped reward (specs/search.md §3.4).

    shapers: `purejaxrl.shaping.build`'s, in registry order; reward_names: the
    components' canonical order. weights: the component weights in force when the
    search is given no levers (None: the run weighs nothing); a trainer passes its
    traced levers instead. retreat_charged: a shaper already charges a step away from
    the exit (`--distance-shaping potential`), so an UNDO's correction does not
    charge it twice. A shaper's carry starts fresh at each root unless the caller
    passes the game's carries. weighted: False for `trained-unweighted`, the run's
    levers over the game's own component weights (every weight 1, whatever levers a
    trainer passes), so a penalty the run weighed down costs its full game price.
    """

    shapers: tuple
    reward_names: tuple
    weights: tuple | None = None
    retreat_charged: bool = False
    weighted: bool = True

    @property
    def name(self) -> str:
        """Its `--search-tree-reward` name."""
        return "trained" if self.weighted else "trained-unweighted"

    def constant_levers(self) -> shaping.Levers:
        weights = None if self.weights is None else jnp.asarray(self.weights, jnp.float32)
        return shaping.Levers(weights=weights, program_levers=None)

    def init_carries(self, batch: int) -> dict:
        return shaping.init_carries(self.shapers, batch)


def tree_reward_for_run(
    train_config: Mapping[str, Any] | Any, *, weighted: bool = True
) -> TreeReward | None:
    """The TreeReward of a run's stored config (a mapping or a TrainConfig): its shapers,
    its final reward weights and the program levers on; None when it trained on the
    env's reward. `weighted=False` drops the run's component weights (and their anneal)
    and keeps its other levers: None when weights were all it shaped."""
    from ..jax_env import REWARD_COMPONENT_NAMES
    from ..purejaxrl import levers

    config = _as_train_config(train_config)
    if not weighted:
        config = replace(
            config, reward_weights=None, reward_weights_final=None, reward_weights_anneal=None
        )
    names = tuple(REWARD_COMPONENT_NAMES)
    shapers = shaping.build(config, names)
    if not shapers:
        return None
    schedule = levers.weights_schedule(config, names)
    weights = None
    if schedule is not None:  # the weights in force at the end of the anneal
        weights = tuple(float(w) for w in np.asarray(schedule.at(1 << 30, 1 << 30)))
    return TreeReward(
        shapers=shapers,
        reward_names=names,
        weights=weights,
        retreat_charged=config.distance_shaping == "potential",
        weighted=weighted,
    )


def tree_reward_named(name: str, train_config: Mapping[str, Any] | Any) -> TreeReward | None:
    """The tree reward `--search-tree-reward name` gives a run (None: the env's own)."""
    if name not in TREE_REWARDS:
        raise ValueError(f"tree_reward must be one of {TREE_REWARDS}, got {name!r}")
    if name == "env":
        return None
    return tree_reward_for_run(train_config, weighted=name == "trained")


def _as_train_config(stored: Any) -> Any:
    """A TrainConfig from a checkpoint's stored mapping: its known options over the
    defaults (keys of other versions ignored), or the TrainConfig itself."""
    if isinstance(stored, TrainConfig):
        return stored
    return TrainConfig(**{k: v for k, v in dict(stored or {}).items() if k in CONFIG_FLAGS})


@dataclass(frozen=True)
class SearchConfig:
    """The search's options (hashable: a jitted search is compiled for each).

    num_simulations: simulations per root. max_num_considered_actions: root
    actions sequential halving starts from. discount: the per-step discount
    (the trainer's gamma by default). num_roots: roots sampled per decision,
    their results averaged. selection: `greedy` (argmax of the averaged
    improved policy, or of the averaged Q with aggregate `q`), `sample` (from
    the averaged improved policy) or `halving` (mctx's own sequential-halving
    action; a vote over the roots). gumbel_scale: the root's Gumbel noise
    (0 considers the top prior actions). value_target: how the value head is
    scaled. honest_undo, undo_cap: specs/search.md §3.3 (cap None: no cap).
    root: `fair` (sampler.sample_root) or `reseed` (NOT fair: the true state
    with a fresh seed, only to measure what fairness costs). tree_reward: None
    (the env's reward) or the trained reward (`TreeReward`, §3.4). c_scale: the
    improved policy's step (Danihelka et al.'s c_scale, mctx's `value_scale`:
    sigma(q) = (50 + max visits) x c_scale x q, q rescaled to [0, 1]); smaller
    keeps the improved policy nearer the prior. worlds: sampled states searched
    together in each root's one tree (specs/search.md §3.5): every node steps all of
    them with its action and averages their rewards, values and priors, so no single
    redrawn board or future steers the tree (1: one state per tree, as before).
    leaf_rollout: steps of the network's greedy play from each node the tree values
    (and from the root), their discounted rewards plus the value where they stop taking
    the place of the value alone (specs/search.md §3.6; 0: the value, as before).
    """

    num_simulations: int = 16
    max_num_considered_actions: int = 16
    discount: float = 0.99
    num_roots: int = 1
    selection: str = "greedy"
    aggregate: str = "weights"
    gumbel_scale: float = 1.0
    value_target: str = "raw"
    honest_undo: bool = True
    undo_cap: int | None = None
    root: str = "fair"
    tree_reward: TreeReward | None = None
    c_scale: float = 0.1
    worlds: int = 1
    leaf_rollout: int = 0

    def __post_init__(self) -> None:
        checks = [
            (self.num_simulations >= 1, "num_simulations must be >= 1"),
            (
                1 <= self.max_num_considered_actions <= NUM_ACTIONS,
                f"max_num_considered_actions must be in 1..{NUM_ACTIONS}",
            ),
            (0.0 <= self.discount <= 1.0, "discount must be in [0, 1]"),
            (self.num_roots >= 1, "num_roots must be >= 1"),
            (self.selection in SELECTIONS, f"selection must be one of {SELECTIONS}"),
            (self.aggregate in AGGREGATES, f"aggregate must be one of {AGGREGATES}"),
            (
                not (self.aggregate == "q" and self.selection != "greedy"),
                "aggregate 'q' goes with selection 'greedy'",
            ),
            (self.value_target in VALUE_TARGETS, f"value_target must be one of {VALUE_TARGETS}"),
            (self.undo_cap is None or self.undo_cap >= 0, "undo_cap must be >= 0 or None"),
            (self.root in ROOTS, f"root must be one of {ROOTS}"),
            (self.c_scale > 0.0, "c_scale must be > 0"),
            (self.worlds >= 1, "worlds must be >= 1"),
            (
                self.worlds == 1 or self.tree_reward is None,
                "worlds > 1 searches with the env's reward (no tree reward)",
            ),
            (self.leaf_rollout >= 0, "leaf_rollout must be >= 0"),
            (
                self.worlds == 1 or self.leaf_rollout == 0,
                "leaf_rollout needs worlds 1 (a rollout walks one state)",
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"SearchConfig: {message}")


def config_for_policy(train_config: Mapping[str, Any] | None, **options: Any) -> SearchConfig:
    """A SearchConfig for a trained policy: its run's gamma as the discount and its
    `value_target` (the value head's scale), unless `options` say otherwise.
    `tree_reward="trained"` adds the run's own shaped reward in the tree (§3.4),
    `"trained-unweighted"` the same without its component weights, `"env"` (or None) the
    env's."""
    stored = dict(train_config or {})
    options.setdefault("discount", float(stored.get("gamma", SearchConfig.discount)))
    options.setdefault("value_target", stored.get("value_target") or "raw")
    tree = options.get("tree_reward")
    if isinstance(tree, str):
        options["tree_reward"] = tree_reward_named(tree, stored)
    return SearchConfig(**options)


class Embedding(NamedTuple):
    """A search node: the engine's state, the UNDOs run on the path to it and the tree
    reward's shaper carries (an empty dict without any)."""

    state: EnvState
    undos: jax.Array  # int32
    carry: Any = None


class SearchOutput(NamedTuple):
    """One decision per game (batched like the states given)."""

    action: jax.Array  # int32: the action to play
    weights: jax.Array  # f32[28]: the improved policy, averaged over the roots
    q: jax.Array  # f32[28]: Q in return units (unvisited: the search's value), averaged
    value: jax.Array  # f32: the search's value of the position, averaged over the roots
    visits: jax.Array  # f32[28]: root visit counts, summed over the roots


def _symexp(x: jax.Array) -> jax.Array:
    return jnp.sign(x) * jnp.expm1(jnp.abs(x))


def _count(x: jax.Array) -> jax.Array:
    return jnp.sum(x.astype(jnp.int32), axis=-1)


def _undo_pieces(before: Board, after: Board, info: dict) -> tuple[jax.Array, ...]:
    """(pickups' pay, kills' pay, the UNDO's own distance shaping, its retreat charge)."""
    pickups = jnp.maximum(
        _count(after.content == DATA_SIPHON) - _count(before.content == DATA_SIPHON), 0
    )
    restored = jnp.maximum(
        _count(after.e_active)
        + _count(after.t_active)
        - _count(before.e_active)
        - _count(before.t_active),
        0,
    )
    delta = info["exit_distance_delta"].astype(jnp.float32)
    return (
        -DATA_SIPHON_REWARD * pickups.astype(jnp.float32),
        -(KILL_REWARD * restored.astype(jnp.float32)),
        info["reward_components"]["distance_shaping"],
        DISTANCE_REWARD * jnp.minimum(delta, 0.0),
    )


def undo_correction(before: Board, after: Board, info: dict) -> jax.Array:
    """What an UNDO's search reward takes off the env's (f32, per state; specs/search.md §3.3).

    UNDO restores the board of an earlier turn, and the env pays again for
    taking what it restored: +1 for each data-siphon pickup, +0.3 for each
    kill, +0.05 per cell gained toward the exit. The score, resources and hp
    it restores are paid as differences already (they come back out of the
    UNDO's own reward). So the search takes off: 1 per pickup restored, 0.3 per
    entity restored beyond those that appeared in between (a lower bound of
    the kills), and the UNDO's own distance shaping, counting a step back from
    the exit as the loss it is (0.05 per cell, both ways).
    """
    return _correction(_undo_pieces(before, after, info))


def _correction(pieces: tuple[jax.Array, ...]) -> jax.Array:
    pickups, kills, own_distance, retreat = pieces
    return pickups + kills - own_distance + retreat


def _component_correction(
    pieces: tuple[jax.Array, ...], reward_names: tuple, retreat_charged: bool
) -> jax.Array:
    pickups, kills, own_distance, retreat = pieces
    distance = -own_distance if retreat_charged else retreat - own_distance
    parts = {"data_siphon": pickups, "kills": kills, "distance_shaping": distance}
    return jnp.stack([parts.get(name, jnp.float32(0.0)) for name in reward_names])


def undo_component_correction(
    before: Board, after: Board, info: dict, reward_names: tuple, retreat_charged: bool
) -> jax.Array:
    """`undo_correction` as a change of the components (f32[15]): the pickups' part on
    `data_siphon`, the kills' on `kills`, the distance's on `distance_shaping` (without
    the retreat charge when a shaper charges retreats already), so the trained reward's
    shapers weigh and move it as they do the env's own (specs/search.md §3.4)."""
    return _component_correction(_undo_pieces(before, after, info), reward_names, retreat_charged)


def _network_outputs(
    network: nn.Module, config: SearchConfig, params: Any, states: EnvState, mask: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """(masked prior logits, value in return units) of a batch of states."""
    obs = jax.vmap(lambda s: flatten_observation(observe(s)))(states)
    outputs: Any = network.apply(params, obs)
    logits, value = outputs
    if config.value_target == "symlog":
        value = _symexp(value)
    return distribution.masked_logits(logits, mask), value


def _tree_reward(
    tree: TreeReward,
    config: SearchConfig,
    state: EnvState,
    new: EnvState,
    action: jax.Array,
    reward: jax.Array,
    info: dict,
    undo: jax.Array,
    carry: Any,
    levers: shaping.Levers,
) -> tuple[jax.Array, Any]:
    """(the trained reward of a batch of tree steps, the shapers' new carries)."""
    carry = {} if carry is None else carry
    if not tree.weighted:  # the game's weights, whatever a trainer's levers weigh
        levers = levers._replace(weights=None)
    components = jnp.stack([info["reward_components"][n] for n in tree.reward_names], -1)
    if config.honest_undo:  # one set of pieces: the env reward's and the components' change
        pieces = jax.vmap(_undo_pieces)(state.board, new.board, info)
        reward = reward + jnp.where(undo, _correction(pieces), 0.0)
        moved = jax.vmap(
            lambda p: _component_correction(p, tree.reward_names, tree.retreat_charged)
        )(pieces)
        components = components + jnp.where(undo[:, None], moved, 0.0)
    ended = new.outcome != RUNNING
    facts = shaping.StepFacts(action, reward, components, ended, info)
    trained, _terms, carry = shaping.shape(tree.shapers, facts, carry, levers)
    return trained, carry


def _cap_undo(config: SearchConfig, mask: jax.Array, undos: jax.Array) -> jax.Array:
    """The node's mask with UNDO taken away once its path holds `undo_cap` UNDOs (§3.3)."""
    if config.undo_cap is None:
        return mask
    return mask.at[..., UNDO_ACTION].set(mask[..., UNDO_ACTION] & (undos < config.undo_cap))


def _vmapped(fn, depth: int):
    """fn over `depth` leading batch axes ([R] for one world, [R, W] for several)."""
    for _ in range(depth):
        fn = jax.vmap(fn)
    return fn


class _NodeStep(NamedTuple):
    """What one action does to a node's states, shared by both tree models."""

    new: EnvState
    reward: jax.Array  # the env's, honest about UNDO unless a tree reward prices it
    info: dict
    over: jax.Array  # the game had already ended before the action
    undo: jax.Array  # the action was an UNDO the env carried out
    undos: jax.Array  # UNDOs on the path, this one included
    mask: jax.Array  # the new states' masks, UNDO capped (§3.3)


def _step_node(
    config: SearchConfig, state: EnvState, actions: jax.Array, undos: jax.Array, depth: int
) -> _NodeStep:
    new, reward, _done, info = _vmapped(step_state, depth)(state, actions)
    undo = ~info["invalid_action"] & (actions == UNDO_ACTION)
    if config.honest_undo and config.tree_reward is None:  # a tree reward corrects its own
        correction = _vmapped(undo_correction, depth)(state.board, new.board, info)
        reward = reward + jnp.where(undo, correction, 0.0)
    undos = undos + undo.astype(jnp.int32)
    mask = _cap_undo(config, _vmapped(action_mask, depth)(new), undos)
    return _NodeStep(new, reward, info, state.outcome != RUNNING, undo, undos, mask)


def _discount(config: SearchConfig, undo: jax.Array) -> jax.Array:
    """An UNDO takes the game back, not forward: with honest_undo it is not discounted,
    so that putting a bad future off by UNDOing in place never looks like a gain."""
    discount = jnp.float32(config.discount)
    if config.honest_undo:
        discount = jnp.where(undo, jnp.float32(1.0), discount)
    return discount


def rolled_out_value(
    network: nn.Module,
    config: SearchConfig,
    params: Any,
    levers: Any,
    state: EnvState,
    undos: jax.Array,
    carry: Any,
    logits: jax.Array,
    value: jax.Array,
) -> jax.Array:
    """The value of a batch of nodes [R] under `config.leaf_rollout` (§3.6).

    From each node (its masked prior `logits`, its network `value`) the network plays
    its own greedy action K times through the tree's model (the same rewards, UNDO
    honesty and discounts as the tree's edges); the node's value is the discounted sum of
    those rewards plus the discounted network value of the state where the walk stops.
    A game that ends on the walk adds nothing after it (its discount is 0). The walk's
    UNDOs and shaper carries are its own: the node keeps its path's. K = 0: `value`.
    """
    if config.leaf_rollout == 0:
        return value

    def walk_step(walk, _):
        state, undos, carry, logits, total, weight, _value = walk
        action = jnp.argmax(logits, axis=-1).astype(jnp.int32)
        new, reward, info, over, undo, undos, mask = _step_node(
            config, state, action, undos, depth=1
        )
        if config.tree_reward is not None:
            reward, carry = _tree_reward(
                config.tree_reward, config, state, new, action, reward, info, undo, carry, levers
            )
        total = total + weight * jnp.where(over, 0.0, reward)
        ended = new.outcome != RUNNING
        weight = weight * jnp.where(ended, 0.0, _discount(config, undo))
        logits, value = _network_outputs(network, config, params, new, mask)
        return (new, undos, carry, logits, total, weight, value), None

    start_weight = jnp.where(state.outcome != RUNNING, 0.0, 1.0).astype(jnp.float32)
    walk = (state, undos, carry, logits, jnp.zeros_like(value), start_weight, value)
    walk, _ = jax.lax.scan(walk_step, walk, None, length=config.leaf_rollout)
    _state, _undos, _carry, _logits, total, weight, last_value = walk
    return total + weight * last_value


def _recurrent_fn(network: nn.Module, config: SearchConfig):
    def recurrent_fn(params_and_levers, rng, action, embedding):
        del rng  # the engine draws from the sampled seed
        params, levers = params_and_levers
        state = embedding.state
        new, reward, info, over, undo, undos, mask = _step_node(
            config, state, action, embedding.undos, depth=1
        )
        carry = embedding.carry
        if config.tree_reward is not None:
            reward, carry = _tree_reward(
                config.tree_reward, config, state, new, action, reward, info, undo, carry, levers
            )
        logits, value = _network_outputs(network, config, params, new, mask)
        value = rolled_out_value(network, config, params, levers, new, undos, carry, logits, value)
        ended = new.outcome != RUNNING
        output = mctx.RecurrentFnOutput(
            reward=jnp.where(over, 0.0, reward),
            discount=jnp.where(ended, 0.0, _discount(config, undo)),
            prior_logits=logits,
            value=jnp.where(ended, 0.0, value),
        )
        return output, Embedding(new, undos, carry)

    return recurrent_fn


def common_mask(masks: jax.Array, ended: jax.Array) -> jax.Array:
    """A node's legal actions over its worlds (masks[..., W, A], ended[..., W]): those legal
    in every world still running; if none is, those legal in any running world (a world
    where the action is illegal then stands still, as the env leaves a rejected action)."""
    running = ~ended[..., None]
    everywhere = jnp.all(jnp.where(running, masks, True), axis=-2)
    anywhere = jnp.any(jnp.where(running, masks, False), axis=-2)
    return jnp.where(
        jnp.any(everywhere & anywhere, -1, keepdims=True), everywhere & anywhere, anywhere
    )


def world_mean(x: jax.Array, ended: jax.Array) -> jax.Array:
    """The mean of x[..., W, *] over the worlds still running (over all when none is)."""
    weight = (~ended).astype(jnp.float32)
    weight = jnp.where(jnp.any(~ended, -1, keepdims=True), weight, 1.0)
    weight = weight.reshape(weight.shape + (1,) * (x.ndim - weight.ndim))
    return jnp.sum(x * weight, axis=ended.ndim - 1) / jnp.sum(weight, axis=ended.ndim - 1)


def _world_outputs(
    network: nn.Module, config: SearchConfig, params: Any, states: EnvState, mask: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """(per-world masked logits [R, W, A], values [R, W]) of states batched [R, W], every
    world under the node's one mask [R, A]."""
    roots, worlds = states.stage.shape
    flat = jax.tree_util.tree_map(lambda x: x.reshape((roots * worlds, *x.shape[2:])), states)
    masks = jnp.repeat(mask, worlds, axis=0)
    logits, value = _network_outputs(network, config, params, flat, masks)
    return logits.reshape(roots, worlds, -1), value.reshape(roots, worlds)


def _worlds_recurrent_fn(network: nn.Module, config: SearchConfig):
    """The tree's model with `config.worlds` sampled states in each node (§3.5): the
    action steps every world; the node's reward is their mean (a world that ended earlier
    adds 0), its value the mean of the running worlds' values (an ended world's is 0),
    its prior the mean of the running worlds' logits over the common mask; the path ends
    only when every world has."""

    def recurrent_fn(params_and_levers, rng, action, embedding):
        del rng
        params, _ = params_and_levers
        state = embedding.state  # [R, W]
        actions = jnp.broadcast_to(action[:, None], state.stage.shape)
        new, reward, _info, over, undo, undos, masks = _step_node(
            config, state, actions, embedding.undos, depth=2
        )
        ended = new.outcome != RUNNING
        mask = common_mask(masks, ended)
        logits, value = _world_outputs(network, config, params, new, mask)
        all_ended = jnp.all(ended, axis=-1)
        output = mctx.RecurrentFnOutput(
            reward=jnp.mean(jnp.where(over, 0.0, reward), axis=-1),
            discount=jnp.where(all_ended, 0.0, _discount(config, jnp.any(undo, -1))),
            prior_logits=world_mean(logits, ended),
            value=jnp.where(all_ended, 0.0, jnp.mean(jnp.where(ended, 0.0, value), axis=-1)),
        )
        return output, Embedding(new, undos, embedding.carry)

    return recurrent_fn


def _qtransform(config: SearchConfig) -> dict:
    """mctx's own completed-Q transform, with the config's c_scale when it is not mctx's
    default (then the call is exactly mctx's default one)."""
    if config.c_scale == MCTX_C_SCALE:
        return {}
    transform = partial(mctx.qtransform_completed_by_mix_value, value_scale=config.c_scale)
    return {"qtransform": transform}


def _search_game(
    params: Any,
    key: jax.Array,
    state: EnvState,
    levers: Any,
    carry: Any,
    network: nn.Module,
    config: SearchConfig,
) -> SearchOutput:
    """One game's decision (an unbatched state; `levers` and the game's shaper `carry`
    feed a tree reward, §3.4)."""
    k_roots, k_search, k_select = jax.random.split(key, 3)
    draw = sampler.sample_root if config.root == "fair" else sampler.reseed_root
    draws = config.num_roots * config.worlds
    roots = jax.vmap(draw, in_axes=(0, None))(jax.random.split(k_roots, draws), state)
    mask = action_mask(state)  # the real mask: what the env shows the player
    running = jnp.any(mask)
    legal = jnp.where(running, mask, True)  # an ended game searches all (its action is unused)
    masks = jnp.broadcast_to(legal, (config.num_roots, NUM_ACTIONS))
    carries = jax.tree_util.tree_map(
        lambda x: jnp.broadcast_to(x, (config.num_roots, *jnp.shape(x))), carry
    )
    if config.worlds == 1:
        logits, value = _network_outputs(network, config, params, roots, masks)
        undos = jnp.zeros(config.num_roots, jnp.int32)
        value = rolled_out_value(
            network, config, params, levers, roots, undos, carries, logits, value
        )
        recurrent_fn = _recurrent_fn(network, config)
    else:  # each root's tree holds `worlds` sampled states (§3.5)
        shape = (config.num_roots, config.worlds)
        roots = jax.tree_util.tree_map(lambda x: x.reshape(shape + x.shape[1:]), roots)
        logits, values = _world_outputs(network, config, params, roots, masks)
        logits, value = jnp.mean(logits, axis=1), jnp.mean(values, axis=1)
        undos = jnp.zeros(shape, jnp.int32)
        recurrent_fn = _worlds_recurrent_fn(network, config)
    out = mctx.gumbel_muzero_policy(
        params=(params, levers),
        rng_key=k_search,
        root=mctx.RootFnOutput(
            prior_logits=logits,
            value=value,
            embedding=Embedding(roots, undos, carries),
        ),
        recurrent_fn=recurrent_fn,
        num_simulations=config.num_simulations,
        invalid_actions=~masks,
        max_num_considered_actions=config.max_num_considered_actions,
        gumbel_scale=config.gumbel_scale,
        **_qtransform(config),
    )
    summary = out.search_tree.summary()
    weights = jnp.mean(out.action_weights, axis=0)
    q = jnp.mean(jnp.where(summary.visit_counts > 0, summary.qvalues, summary.value[:, None]), 0)
    if config.selection == "greedy":
        score = weights if config.aggregate == "weights" else q
        action = jnp.argmax(jnp.where(legal, score, -jnp.inf))
    elif config.selection == "sample":
        action = jax.random.categorical(k_select, jnp.where(legal, jnp.log(weights), -jnp.inf))
    else:  # halving: mctx's action, a vote over the roots (ties to the lowest index)
        votes = jnp.sum(jax.nn.one_hot(out.action, NUM_ACTIONS), axis=0)
        action = jnp.argmax(jnp.where(legal, votes, -1.0))
    return SearchOutput(
        action=jnp.where(running, action, 0).astype(jnp.int32),
        weights=weights,
        q=q,
        value=jnp.mean(summary.value),
        visits=jnp.sum(summary.visit_counts, axis=0),
    )


def _levers_and_carries(
    config: SearchConfig, batch: int, levers: Any, carries: Any
) -> tuple[Any, Any]:
    """The tree reward's levers (its constants unless given) and the games' carries
    (fresh unless given); (None, {}) without a tree reward."""
    tree = config.tree_reward
    if tree is None:
        return None, {}
    levers = tree.constant_levers() if levers is None else levers
    carries = tree.init_carries(batch) if carries is None else carries
    return levers, carries


def _search_batch(params, keys, states, levers, carries, network, config) -> SearchOutput:
    levers, carries = _levers_and_carries(config, keys.shape[0], levers, carries)
    return jax.vmap(_search_game, in_axes=(None, 0, 0, None, 0, None, None))(
        params, keys, states, levers, carries, network, config
    )


@partial(jax.jit, static_argnames=("network", "config"))
def search(
    params: Any,
    keys: jax.Array,
    states: EnvState,
    *,
    network: nn.Module,
    config: SearchConfig,
    levers: Any = None,
    carries: Any = None,
) -> SearchOutput:
    """A batch of decisions: key[B], states batched [B] -> SearchOutput batched [B].

    With a tree reward, `levers` (shaping.Levers, shared by the batch) override its
    constant weights and `carries` ({shaper: [B, ...]}) are the games' shaper carries.
    """
    return _search_batch(params, keys, states, levers, carries, network, config)


def _batched(state: EnvState) -> bool:
    return jnp.ndim(state.stage) > 0


def _game_keys(key: jax.Array, batch: int) -> jax.Array:
    """One key per game: given per game (key[B]) or split from one key."""
    one = key.ndim == 0 if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key) else key.ndim == 1
    return jax.random.split(key, batch) if one else key


@dataclass(frozen=True)
class Searcher:
    """The search as a policy: `choose(key, state, params) -> action`.

    `state` is one game or a batch (then `key` is one key, split per game, or
    one key per game). Compiled once per network, config and batch size.
    """

    network: nn.Module
    config: SearchConfig = SearchConfig()

    def search(self, key: jax.Array, state: EnvState, params: Any) -> SearchOutput:
        if _batched(state):
            keys = _game_keys(key, state.stage.shape[0])
            return search(params, keys, state, network=self.network, config=self.config)
        one = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[None], state)
        out = search(params, key[None], one, network=self.network, config=self.config)
        return SearchOutput(*(x[0] for x in out))

    def choose(self, key: jax.Array, state: EnvState, params: Any) -> jax.Array:
        return self.search(key, state, params).action


@struct.dataclass
class SearchChooser:
    """The search as a chooser of a jitted game loop: `(key, obs, mask, state) -> action[B]`.

    `key` is one key per game (key[B]) or one key for the batch; `obs` and
    `mask` are not read (the search observes its sampled roots, which give the
    same observation, and takes the mask from the state).
    """

    network: nn.Module = struct.field(pytree_node=False)
    config: SearchConfig = struct.field(pytree_node=False)
    params: Any = None

    def __call__(self, key: jax.Array, obs: jax.Array, mask: jax.Array, state: Any) -> jax.Array:
        del obs, mask
        keys = _game_keys(key, state.stage.shape[0])
        out = _search_batch(self.params, keys, state, None, None, self.network, self.config)
        return out.action
