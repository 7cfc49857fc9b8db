"""Expert iteration: the network learns from the search (training.md §2.10).

`--algorithm expert-iteration` is PPO's trainer with two parts swapped (train.py builds
the rest: rollout, reward shaping, auto-reset, curriculum, GAE, minibatches, chunks):

- acting: every env step searches the batch of games (Gumbel MuZero over the JAX engine
  from a fair root, `hackmatrix.search`, with the current parameters); each env plays its
  search's action, mctx's sequential-halving winner under Gumbel noise, which is the
  exploration (with `--search-acting network` the env plays a sample of the network's
  policy instead, the search only labelling its states); the step keeps the search's
  improved policy as the policy target (or, with `--search-policy-target argmax`, the
  one-hot of the move it would play). With
  `--search-tree-reward trained` (the preset's) the tree adds the run's shaped reward, with
  the levers in force and each game's shaper carries: the reward the value head learns;
  `env` (the option's default) adds the game's own (the runs of specs/experiments/43);
- learning (Gumbel AlphaZero, Danihelka et al. 2022): the cross-entropy from the improved
  policy to the network's masked policy, the value loss toward PPO's GAE(lambda) returns on
  the same `--value-target` scale, and PPO's entropy terms.

With the network acting, two options make it PPO that also distils the search:
`--search-ppo-coef W` adds PPO's clipped surrogate on the network's own moves, and
`--search-share F` searches only ceil(F x envs) games of each step (the search's cost falls
with it; the cross-entropy is averaged over the searched rows): the first ones, or with
`--search-select furthest` those on the highest stages at that step (`furthest_envs`), or
with `split` the furthest half of them and the rest drawn from the others (`split_envs`).
`--search-min-q-gap G` keeps a label only where the search is confident: its move's Q beats
the network's greedy move's by at least G (the other rows count in the average with no
cross-entropy).
`--search-policy-target advantage` gives no label: the search's `Q(a) - V` of every action
are advantages in PPO's clipped surrogate summed over the legal actions (`all_action_surrogate`);
with `--search-advantage-actions moves` over the legal moves only (`moving_only`).

The search (and with it mctx) is imported only when a trainer for this algorithm is built.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ..names import SIPHON_ACTION
from . import distribution
from .config import TrainConfig
from .train import Acted, add_value_and_entropy, clipped_surrogate

# The game the search can model: its engine steps the states the trainer carries.
ENGINE_MODULE = "hackmatrix.jax_env"


class SearchStep(NamedTuple):
    """What one env step keeps of its search (batched over envs)."""

    policy_target: jax.Array  # f32[E, 28]: the improved policy (0 on illegal actions)
    value: jax.Array  # f32[E]: the search's value of the position, in return units
    agrees: jax.Array  # bool[E]: the network's greedy action is the improved policy's argmax
    kl: jax.Array  # f32[E]: KL(improved policy || the network's policy) at acting time
    # bool[E]: the search labelled this env's state (all true unless --search-share < 1;
    # the other rows above are 0)
    searched: Any = None
    # bool[E]: the label passed --search-min-q-gap's gate (None without the gate)
    confident: Any = None
    # With --search-policy-target advantage (None otherwise): f32[E, 28], the search's
    # advantage of each action (`search_advantage`), and f32[E, 28], the network's masked
    # log-policy at acting time (the old policy of the all-action surrogate's ratios)
    advantage: Any = None
    log_policy: Any = None


class LossInputs(NamedTuple):
    """The per-step fields of a Transition that this loss reads (PPO's action and
    log_prob only with --search-ppo-coef, `searched` only with --search-share < 1,
    `confident` only with --search-min-q-gap)."""

    obs: jax.Array
    mask: jax.Array
    policy_target: jax.Array
    action: Any = None
    log_prob: Any = None
    searched: Any = None
    confident: Any = None
    advantage: Any = None
    log_policy: Any = None


def searched_envs(config: TrainConfig) -> int:
    """How many envs the search labels each step: ceil(share x envs)."""
    return max(1, math.ceil(config.search_share * config.num_envs - 1e-9))


def furthest_envs(key: jax.Array, stage: jax.Array, count: int) -> jax.Array:
    """`--search-select furthest`: the indices of the `count` games on the highest stages
    (`stage` i32[E]), ties within a stage broken uniformly at random by `key`: a uniform
    draw in [0, 1) is added to the stage. In float32 a draw within ~1e-7 of 1 rounds up to
    the next stage's value and may then tie a game there: a chance far too small to matter
    for choosing which games to search, and the form §60's runs used."""
    noise = jax.random.uniform(key, stage.shape)
    _, rows = jax.lax.top_k(stage.astype(jnp.float32) + noise, count)
    return rows


def split_envs(key: jax.Array, stage: jax.Array, count: int) -> jax.Array:
    """`--search-select split`: ceil(count / 2) games on the highest stages (`furthest_envs`,
    from the first half of `key`), then the rest drawn uniformly, without replacement, from
    the other games (from the second half). Half the searches still reach the late stages;
    the other half keep every stage's games in the search's sample (§61: left to PPO alone,
    the early stages drifted)."""
    stage_key, draw_key = jax.random.split(key)
    furthest = (count + 1) // 2
    top = furthest_envs(stage_key, stage, furthest)
    if furthest == count:  # one searched game: nothing left to draw
        return top
    draw = jax.random.uniform(draw_key, stage.shape).at[top].set(-1.0)  # never drawn twice
    _, rest = jax.lax.top_k(draw, count - furthest)
    return jnp.concatenate([top, rest])


# How `--search-select` picks the searched rows from the stages (`first` needs no picking).
_SELECTORS = {"furthest": furthest_envs, "split": split_envs}


def make_loss_inputs(config: TrainConfig):
    """`loss_inputs(traj) -> LossInputs`: what this run's loss reads of a rollout."""
    with_ppo = config.search_ppo_coef > 0
    partial_search = searched_envs(config) < config.num_envs
    gated = config.search_min_q_gap > 0
    by_advantage = config.search_policy_target == "advantage"

    def loss_inputs(traj: Any) -> LossInputs:
        return LossInputs(
            obs=traj.obs,
            mask=traj.mask,
            policy_target=traj.search.policy_target,
            action=traj.action if with_ppo else None,
            log_prob=traj.log_prob if with_ppo else None,
            searched=traj.search.searched if partial_search else None,
            confident=traj.search.confident if gated else None,
            advantage=traj.search.advantage if by_advantage else None,
            log_policy=traj.search.log_policy if by_advantage else None,
        )

    return loss_inputs


def search_config(config: TrainConfig) -> Any:
    """The search each env step runs: the run's options, its gamma as the discount, its
    value head's scale, its tree reward (the run's own with `trained`; the acting step
    passes the levers in force over its constant weights), and mctx's own Gumbel
    sequential-halving action."""
    from ..search.search import SearchConfig, tree_reward_named

    tree_reward = tree_reward_named(config.search_tree_reward, config)
    return SearchConfig(
        num_simulations=config.search_simulations,
        max_num_considered_actions=config.search_considered,
        discount=config.gamma,
        gumbel_scale=config.search_gumbel_scale,
        value_target=config.value_target,
        selection="halving",
        tree_reward=tree_reward,
        c_scale=config.search_c_scale,
    )


def check_engine(env: ModuleType) -> None:
    """The search models the game with the JAX engine itself, so no other game will do."""
    name = getattr(env, "__name__", repr(env))
    if name != ENGINE_MODULE:
        raise ValueError(
            f"--algorithm expert-iteration searches with the JAX engine ({ENGINE_MODULE}) "
            f"as its model; it cannot train --env-module {name}"
        )


def _cross_entropy(target: jax.Array, log_p: jax.Array) -> jax.Array:
    """-sum target log p per row (0 x log p where the target is 0: illegal actions)."""
    return -jnp.sum(jnp.where(target > 0, target * log_p, 0.0), axis=-1)


def _entropy(target: jax.Array) -> jax.Array:
    return _cross_entropy(target, jnp.log(jnp.where(target > 0, target, 1.0)))


def _masked_log_policy(logits: jax.Array, mask: jax.Array) -> jax.Array:
    return jax.nn.log_softmax(distribution.masked_logits(logits, mask), axis=-1)


def searched_move(weights: jax.Array, mask: jax.Array) -> jax.Array:
    """The move the search would play: the legal argmax of its improved policy (the play
    tools' greedy searched move)."""
    return jnp.argmax(jnp.where(mask, weights, -1.0), axis=-1)


def policy_target(weights: jax.Array, mask: jax.Array, kind: str) -> jax.Array:
    """What the policy learns from a search (`--search-policy-target`): its improved policy
    (`weights`, 0 on illegal actions), or with `argmax` the one-hot of `searched_move`. A
    game with no legal action learns nothing from either (an all-zero row). With
    `advantage` the policy learns the search's Q instead (`all_action_surrogate`); the
    improved policy is kept as the row's target for the metrics (`search/kl`, ...)."""
    if kind in ("improved", "advantage"):
        return weights
    best = searched_move(weights, mask)
    legal = jnp.any(mask, axis=-1, keepdims=True)
    return jax.nn.one_hot(best, weights.shape[-1], dtype=weights.dtype) * legal


def q_gap(q: jax.Array, best: jax.Array, greedy: jax.Array) -> jax.Array:
    """The search's Q (return units) of its move `best` less its Q of the network's greedy
    move, per row (0 where they are the same move)."""

    def q_of(action):
        return jnp.take_along_axis(q, action[:, None], axis=-1)[:, 0]

    return q_of(best) - q_of(greedy)


def search_advantage(q: jax.Array, value: jax.Array, mask: jax.Array) -> jax.Array:
    """The search's advantage of each action, `Q(a) - V` in return units (`q` f32[E, 28],
    `value` f32[E]: the search's value of the position): 0 on illegal actions, and 0 on an
    action the search did not visit (its Q is the search's value), so only what the search
    measured moves the policy."""
    return jnp.where(mask, q - value[:, None], 0.0)


def all_action_surrogate(
    log_p: jax.Array,
    old_log_p: jax.Array,
    advantage: jax.Array,
    mask: jax.Array,
    clip_eps: float,
) -> tuple[jax.Array, jax.Array]:
    """PPO's clipped surrogate over every legal action instead of the one sampled: per row
    `-sum_a pi_old(a) min(r_a A_a, clip(r_a, 1 - eps, 1 + eps) A_a)` with `r_a =
    pi(a) / pi_old(a)`. Unclipped its gradient is the expected advantage under the policy
    (the all-action policy gradient with a critic's Q); the clip bounds how far one update
    moves each action's probability, as PPO bounds the sampled one. Returns the per-row
    loss and the share of the rows' old probability whose ratio was clipped."""
    old_p = jnp.where(mask, jnp.exp(old_log_p), 0.0)
    ratio = jnp.exp(jnp.where(mask, log_p - old_log_p, 0.0))
    clipped = jnp.clip(ratio, 1.0 - clip_eps, 1.0 + clip_eps)
    per_action = jnp.maximum(-advantage * ratio, -advantage * clipped)
    pushed = (advantage != 0) & (jnp.abs(ratio - 1.0) > clip_eps)
    return jnp.sum(old_p * per_action, axis=-1), jnp.sum(jnp.where(pushed, old_p, 0.0), axis=-1)


def moving_only(
    log_p: jax.Array, old_log_p: jax.Array, advantage: jax.Array, mask: jax.Array
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """`--search-advantage-actions moves`: the all-action surrogate's inputs restricted to the
    four moves (the actions below SIPHON_ACTION). Both log-policies become the policy
    conditioned on moving, `log pi(a | move) = log pi(a) - log pi(moves)`, whose gradient
    leaves the logits of SIPHON and of every program untouched: the search says which way
    to move, PPO's term whether to move. The advantages are multiplied by `pi_old(moves)`,
    so each move is still weighted by `pi_old(a)` (a row where the policy mostly siphons
    counts little), as in the all-action surrogate. Returns `(log_p, old_log_p, advantage,
    mask)` for `all_action_surrogate`."""
    moves = mask & (jnp.arange(mask.shape[-1]) < SIPHON_ACTION)

    def log_moving(x):  # log pi(moves) per row (a row with no legal move is zeroed below)
        return jax.nn.logsumexp(distribution.masked_logits(x, moves), axis=-1, keepdims=True)

    old_log_moving = log_moving(old_log_p)
    return (
        jnp.where(moves, log_p - log_moving(log_p), 0.0),
        jnp.where(moves, old_log_p - old_log_moving, 0.0),
        jnp.where(moves, advantage * jnp.exp(old_log_moving), 0.0),
        moves,
    )


def confident(
    q: jax.Array, best: jax.Array, greedy: jax.Array, min_gap: float, keep_agreeing: bool = False
) -> jax.Array:
    """`--search-min-q-gap`'s gate: the search's move beats the network's greedy move by at
    least `min_gap` (`q_gap`). Where the two moves are the same the gap is 0: the search
    teaches nothing the network does not already play, unless `keep_agreeing`
    (`--search-keep-agreeing`) keeps those labels and gates only the disagreements."""
    passed = q_gap(q, best, greedy) >= min_gap
    return passed | (best == greedy) if keep_agreeing else passed


def make_act(parts: Any, config: TrainConfig, env: ModuleType):
    """Acting by search: `act(params, runner, mask, key, levers) -> Acted` for train.py's
    env step (`parts`: its network and value scale)."""
    check_engine(env)
    from ..search.search import search

    network, value_scale = parts.network, parts.value_scale
    searching = search_config(config)
    labelled = searched_envs(config)  # how many envs are searched each step
    partial_search = labelled < config.num_envs
    selector = _SELECTORS.get(config.search_select)  # None: the first `labelled` envs
    by_stage = selector is not None
    # --search-select-from-update: `first` until the levers' switch, then the selector.
    scheduled = by_stage and config.search_select_from_update > 0
    gated = config.search_min_q_gap > 0
    by_advantage = config.search_policy_target == "advantage"

    def act(params, runner, mask, key, levers) -> Acted:
        logits, head = network.apply(params, runner.obs)
        network_acts = config.search_acting == "network"
        # The key is split only when the network acts: `search` acting stays as it was.
        key, sample_key = jax.random.split(key) if network_acts else (key, key)
        unsplit_key = key  # the search keys' source under `first`
        # ... and split again only to select by stage: `first` stays as it was.
        key, select_key = jax.random.split(key) if by_stage else (key, key)
        rows = None  # `first`: the first `labelled` rows, read without picking
        if selector is not None:
            rows = selector(select_key, runner.env_state.stage, labelled)
        if scheduled:  # before the switch, exactly `first`: its key, its rows (in order)
            assert rows is not None  # a schedule needs a selector (config.check_algorithm)
            selecting = levers.search_select > 0
            key = jnp.where(selecting, key, unsplit_key)
            rows = jnp.where(selecting, rows, jnp.arange(labelled))

        def of_searched(tree):  # the searched envs' rows (the whole batch unless a share is set)
            if not partial_search:
                return tree
            if by_stage:
                return jax.tree_util.tree_map(lambda x: x[rows], tree)
            return jax.tree_util.tree_map(lambda x: x[:labelled], tree)

        keys = jax.random.split(key, runner.obs.shape[0])  # one search key per game
        tree = searching.tree_reward is not None
        out = search(
            params,
            of_searched(keys),
            of_searched(runner.env_state),
            network=network,
            config=searching,
            levers=levers if tree else None,
            carries=of_searched(runner.shaping_carry) if tree else None,
        )
        log_p = _masked_log_policy(logits, mask)
        action = out.action
        if network_acts:  # DAgger: the search labels the states the network reaches
            action, _ = distribution.sample(sample_key, logits, mask)
        searched_mask, searched_log_p = of_searched(mask), of_searched(log_p)
        best = searched_move(out.weights, searched_mask)
        greedy = distribution.greedy(of_searched(logits), searched_mask)
        target = policy_target(out.weights, searched_mask, config.search_policy_target)
        step = SearchStep(
            policy_target=target,
            value=out.value,
            agrees=greedy == best,
            kl=_cross_entropy(target, searched_log_p) - _entropy(target),
            confident=confident(
                out.q, best, greedy, config.search_min_q_gap, config.search_keep_agreeing
            )
            if gated
            else None,
            advantage=search_advantage(out.q, out.value, searched_mask) if by_advantage else None,
            log_policy=searched_log_p if by_advantage else None,
        )
        if partial_search:  # the unsearched rows: zeros (an all-zero target learns nothing)
            unsearched = config.num_envs - labelled

            def pad(x):
                if by_stage:  # each searched row back in its env's place
                    return jnp.zeros((config.num_envs, *x.shape[1:]), x.dtype).at[rows].set(x)
                return jnp.concatenate([x, jnp.zeros((unsearched, *x.shape[1:]), x.dtype)])

            step = SearchStep(
                policy_target=pad(step.policy_target),
                value=pad(step.value),
                agrees=pad(step.agrees),
                kl=pad(step.kl),
                searched=pad(jnp.ones((labelled,), bool)),
                confident=pad(step.confident) if gated else None,
                advantage=pad(step.advantage) if by_advantage else None,
                log_policy=pad(step.log_policy) if by_advantage else None,
            )
        return Acted(
            action=action,
            empty=~jnp.any(mask, axis=-1),  # the search then played 0, as PPO does
            log_prob=jnp.take_along_axis(log_p, action[:, None], axis=-1)[:, 0],
            value=value_scale.to_value(head),
            search=step,
        )

    return act


def make_loss(config: TrainConfig, network: Any, value_scale: Any):
    """The loss of one minibatch, called as PPO's is (`loss_fn(params, batch, ent_coef,
    ent_coef_programs)`, the batch `(LossInputs, advantages, value targets)`)."""

    ppo_coef = config.search_ppo_coef
    moves_only = config.search_advantage_actions == "moves"

    def loss_fn(params, batch, ent_coef=None, ent_coef_programs=None):
        inputs, advantages, targets = batch  # the advantages: PPO's term's alone
        ent_coef = config.ent_coef if ent_coef is None else ent_coef
        logits, head = network.apply(params, inputs.obs)
        log_p = _masked_log_policy(logits, inputs.mask)
        cross_entropy = _cross_entropy(inputs.policy_target, log_p)
        kl = cross_entropy - _entropy(inputs.policy_target)
        per_row = {"train/policy_kl": kl}
        search_term = cross_entropy
        if inputs.advantage is not None:  # the search's Q, through PPO's clip, not a label
            # On PPO's normalised scale: the same divisor as the GAE advantages (both are
            # estimates of Q - V in return units), no centring (V is the baseline already).
            scale = jnp.std(advantages) + 1e-8
            surrogate_inputs = (log_p, inputs.log_policy, inputs.advantage / scale, inputs.mask)
            if moves_only:
                surrogate_inputs = moving_only(*surrogate_inputs)
            search_term, clipped = all_action_surrogate(*surrogate_inputs, config.clip_eps)
            per_row["train/search_clip_frac"] = clipped
        if inputs.confident is not None:  # the gate: these rows learn nothing from the search
            search_term = jnp.where(inputs.confident, search_term, 0.0)
            per_row = {name: jnp.where(inputs.confident, x, 0.0) for name, x in per_row.items()}
        if inputs.advantage is not None:
            per_row["train/search_surrogate"] = search_term
        if inputs.searched is None:
            policy_loss = search_term.mean()
            averaged = {name: x.mean() for name, x in per_row.items()}
        else:  # averaged over the searched rows (the others' targets and advantages are 0)
            rows = jnp.maximum(jnp.sum(inputs.searched), 1)
            policy_loss = jnp.sum(search_term) / rows
            averaged = {name: jnp.sum(x) / rows for name, x in per_row.items()}
        ppo_metrics = {}
        if ppo_coef > 0:
            pg_loss, ppo_metrics = clipped_surrogate(logits, inputs, advantages, config.clip_eps)
            policy_loss = policy_loss + ppo_coef * pg_loss
        total, shared = add_value_and_entropy(
            policy_loss,
            logits,
            head,
            inputs.mask,
            targets,
            config=config,
            value_scale=value_scale,
            ent_coef=ent_coef,
            ent_coef_programs=ent_coef_programs,
        )
        return total, {
            **shared,
            **ppo_metrics,
            **averaged,
            "train/policy_loss": policy_loss,
        }

    return loss_fn


def search_metrics(step: SearchStep) -> dict[str, jax.Array]:
    """The rollout's `search/*` metrics (training.md §3.2), over the searched rows."""
    fields = {
        "search/agreement": step.agrees.astype(jnp.float32),
        "search/kl": step.kl,
        "search/target_entropy": _entropy(step.policy_target),
        "search/value": step.value,
    }
    if step.confident is not None:  # --search-min-q-gap: the share of labels kept
        fields["search/confident"] = step.confident.astype(jnp.float32)
    if step.searched is None:
        return {name: jnp.mean(x) for name, x in fields.items()}
    rows = jnp.maximum(jnp.sum(step.searched), 1)
    return {name: jnp.sum(jnp.where(step.searched, x, 0.0)) / rows for name, x in fields.items()}
