"""`--algorithm expert-iteration` (training.md §2.10): the network learns from the search.

One compiled chunk serves every run here (4 envs x 8 steps, a 32-wide network, 2
simulations of 4 considered actions, the tree adding a shaped reward with a carry and a
switch): the first run compiles it, and the resume, the
`--init-from` run and the time-limited run reuse the trainer already built (train.py keeps
it per config). The learning step is checked on its own, without the search.
"""

import dataclasses
import json
import os
import types
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import TINY_FLAGS

from hackmatrix.purejaxrl import cli
from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl.checkpoint import (
    CheckpointError,
    latest_checkpoint,
    load_checkpoint,
    load_initial_params,
    save_checkpoint,
)
from hackmatrix.purejaxrl.network import NUM_ACTIONS, OBS_SIZE, make_network
from hackmatrix.purejaxrl.resolve import resolve_command_line

jax_env = pytest.importorskip("hackmatrix.jax_env")

ENVS, STEPS = 4, 8
BATCH = ENVS * STEPS
BATCH_FLAGS = [
    *TINY_FLAGS,
    "--num-envs",
    str(ENVS),
    "--num-steps",
    str(STEPS),
    "--update-epochs",
    "1",
    "--no-episode-gif",
]
EI_FLAGS = [
    *BATCH_FLAGS,
    "--algorithm",
    "expert-iteration",
    "--search-simulations",
    "2",
    "--search-considered",
    "4",
    # The tree adds the trained reward: a carry (the use bonus), a traced switch (the
    # levers from update 2) and a moved siphon pay reach the search.
    "--search-tree-reward",
    "trained",
    "--siphon-pay-on-use",
    "--program-use-bonus",
    "1",
    "--program-levers-from-update",
    "2",
]


def train(tmp_path, name, updates, *flags):
    """A run of the real game through the CLI; returns (exit code, its run directory)."""
    argv = [*EI_FLAGS, "--total-timesteps", str(updates * BATCH), *flags]
    code = cli.main([*argv, "--checkpoint-dir", str(tmp_path), "--run-name", name])
    return code, tmp_path / name


def metrics_of(run_dir):
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").open()]


def params_of(path):
    return jax.tree_util.tree_leaves(load_checkpoint(path)["params"])


# ---------------------------------------------------------------- bad input, no compile


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cfg.build_parser().parse_args(["--algorithm", "alphazero"])
    assert "--algorithm: invalid choice: 'alphazero'" in capsys.readouterr().err
    refused = {
        "search_simulations": (0, "--search-simulations must be a whole number >= 1"),
        "search_considered": (29, r"--search-considered must be a whole number in 1\.\.28"),
        "search_gumbel_scale": (-1.0, "--search-gumbel-scale must be a finite number >= 0"),
        "algorithm": ("alphazero", "--algorithm must be ppo or expert-iteration"),
        "search_tree_reward": (
            "shaped",
            "--search-tree-reward must be one of trained, env, trained-unweighted",
        ),
        "search_c_scale": (0.0, "--search-c-scale must be a finite number > 0"),
        "search_policy_target": (
            "visits",
            "--search-policy-target must be one of improved, argmax, advantage",
        ),
        "search_acting": ("mixed", "--search-acting must be search or network"),
        "search_share": (1.5, r"--search-share must be a number in \(0, 1\]"),
        "search_ppo_coef": (-1.0, "--search-ppo-coef must be a finite number >= 0"),
        "search_min_q_gap": (float("nan"), "--search-min-q-gap must be a finite number >= 0"),
        "search_keep_agreeing": (True, "--search-keep-agreeing needs --search-min-q-gap above 0"),
        "search_advantage_actions": (
            "moves",
            "--search-advantage-actions needs --search-policy-target advantage",
        ),
        "search_select": ("furthest", "--search-select furthest needs --search-share below 1"),
        "search_select_from_update": (10, "--search-select-from-update has nothing to switch"),
    }
    config = cfg.TrainConfig(search_share=0.5, search_acting="network", search_select="last")
    cfg.auto_scale_for_batch_size(config)
    with pytest.raises(ValueError, match="--search-select must be one of first, furthest, split"):
        cfg.validate(config)
    for bad in (-1, 2.5, True):
        config = cfg.TrainConfig(
            search_share=0.5, search_select="split", search_select_from_update=bad
        )
        cfg.auto_scale_for_batch_size(config)
        with pytest.raises(ValueError, match="--search-select-from-update must be a whole update"):
            cfg.validate(config)
    config = cfg.TrainConfig(search_policy_target="advantage", search_advantage_actions="siphon")
    cfg.auto_scale_for_batch_size(config)
    with pytest.raises(ValueError, match="--search-advantage-actions must be all or moves"):
        cfg.validate(config)
    for name, (value, message) in refused.items():
        config = cfg.TrainConfig(**{name: value})
        cfg.auto_scale_for_batch_size(config)
        with pytest.raises(ValueError, match=message):
            cfg.validate(config)
    for options in ({"search_share": 0.5}, {"search_ppo_coef": 1.0}):
        config = cfg.TrainConfig(algorithm="expert-iteration", **options)  # the search acts
        cfg.auto_scale_for_batch_size(config)
        with pytest.raises(ValueError, match="need --search-acting network"):
            cfg.validate(config)
    with pytest.raises(SystemExit):
        cfg.build_parser().parse_args(["--time-limit-minutes", "0"])
    assert "must be a positive number of minutes" in capsys.readouterr().err
    # Errors of the CLI, before a run directory exists: the search models only the engine,
    # and --init-from starts a fresh run where --resume continues one.
    code, run_dir = train(tmp_path, "standin", 3, "--env-module", "standin_env")
    assert code == 2 and not run_dir.exists()
    assert "searches with the JAX engine" in capsys.readouterr().err
    code, _ = train(tmp_path, "both", 3, "--init-from", "x.pkl", "--resume", "y")
    assert code == 2 and "give one of them" in capsys.readouterr().err


def test_ppo_is_the_default_and_older_checkpoints_resume_as_ppo():
    assert cfg.TrainConfig().algorithm == "ppo"
    assert resolve_command_line([]).config.algorithm == "ppo"
    assert resolve_command_line(["--preset", "expert-iteration"]).config.algorithm == (
        "expert-iteration"
    )
    # A checkpoint from before the option stores no algorithm: it trained with PPO, whatever
    # the preset says; a flag on the resume switches it.
    assert resolve_command_line(["--preset", "expert-iteration"], stored={}).config.algorithm == (
        "ppo"
    )
    switched = resolve_command_line(["--algorithm", "expert-iteration"], stored={})
    assert switched.config.algorithm == "expert-iteration"


# --------------------------------------------------------------- the learning step


def test_one_update_moves_the_policy_toward_the_search_targets():
    """On a fixed batch the loss is the cross-entropy to the improved policy plus the value
    loss, as computed by hand, and one update (the trainer's own learn: minibatches,
    epochs, Adam, clip) lowers both."""
    from flax.training.train_state import TrainState

    from hackmatrix.purejaxrl import train as train_module
    from hackmatrix.purejaxrl.expert_iteration import LossInputs

    config = cfg.TrainConfig(
        num_envs=ENVS,
        num_steps=STEPS,
        hidden_dim=32,
        num_minibatches=2,
        update_epochs=2,
        lr=3e-3,
        max_grad_norm=10.0,
        ent_coef=0.0,
        algorithm="expert-iteration",
    )
    trainer = train_module.make_train(config, jax_env)
    rng = np.random.default_rng(0)
    shape = (STEPS, ENVS)
    mask = rng.random((*shape, NUM_ACTIONS)) < 0.3
    mask[..., 0] = True  # a legal move everywhere
    target = np.where(mask, rng.random((*shape, NUM_ACTIONS)) ** 4, 0.0)
    target = (target / target.sum(-1, keepdims=True)).astype(np.float32)
    obs = (rng.random((*shape, OBS_SIZE)) < 0.05).astype(np.float32)  # sparse, as the game's
    returns = rng.normal(size=shape).astype(np.float32)
    params = trainer.network.init(jax.random.PRNGKey(1), jnp.zeros((1, OBS_SIZE)))
    state = TrainState.create(apply_fn=trainer.network.apply, params=params, tx=trainer.optimizer)

    def by_hand(p):
        logits, value = trainer.network.apply(p, obs)
        log_p = jax.nn.log_softmax(jnp.where(mask, logits, -1e9))
        cross_entropy = -np.sum(np.where(target > 0, target * log_p, 0.0), -1).mean()
        return float(cross_entropy), float(0.5 * np.mean((value - returns) ** 2))

    total, reported = trainer.phases["loss_fn"](
        params, (LossInputs(obs, mask, target), np.zeros(shape), returns)
    )
    ce, vf = by_hand(params)
    np.testing.assert_allclose(float(reported["train/policy_loss"]), ce, rtol=1e-5)
    np.testing.assert_allclose(float(reported["train/vf_loss"]), vf, rtol=1e-5)
    np.testing.assert_allclose(float(total), ce + config.vf_coef * vf, rtol=1e-5)
    assert float(reported["train/policy_kl"]) > 0  # random targets: the network is elsewhere

    def update(state, obs, mask, target, returns):
        traj = types.SimpleNamespace(
            obs=obs, mask=mask, search=types.SimpleNamespace(policy_target=target)
        )
        learn = trainer.phases["learn"]
        return learn(state, jax.random.PRNGKey(2), traj, jnp.zeros(shape), returns)[0]

    new_state = jax.jit(update)(state, obs, mask, target, returns)
    after = by_hand(new_state.params)
    assert after[0] < ce - 0.1  # the policy moved toward the targets (2.10 -> 1.92)
    assert after[1] < vf  # and the value toward the returns


def test_the_argmax_target_is_the_searched_move_one_hot():
    """`--search-policy-target argmax`: the one-hot of the legal argmax of the improved
    policy (the move the play tools' searched player makes); `improved` is the policy
    itself; a game with no legal action learns nothing (an all-zero row)."""
    from hackmatrix.purejaxrl.expert_iteration import policy_target

    weights = jnp.array(
        [[0.1, 0.6, 0.3, 0.0], [0.5, 0.2, 0.3, 0.0], [0.0, 0.0, 0.0, 0.0]], jnp.float32
    )
    # Row 1: the largest weight sits on an action the mask forbids (a stale row), so the
    # legal argmax is action 2.
    mask = jnp.array([[1, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 0]], bool)
    np.testing.assert_array_equal(policy_target(weights, mask, "improved"), weights)
    np.testing.assert_array_equal(
        policy_target(weights, mask, "argmax"),
        [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]],
    )


def test_network_acting_plays_the_networks_sample_and_keeps_the_searchs_targets(monkeypatch):
    """`--search-acting network` (DAgger): the env plays a sample of the network's masked
    policy under the second half of the step's key, and the search, called with the first
    half, still gives the targets; `search` acting plays the search's own move and hands
    the search the step's key unsplit, as before the option. The search is a recording
    stand-in here (its own tests are tests/search/): this checks the acting's plumbing."""
    from hackmatrix.purejaxrl import distribution
    from hackmatrix.purejaxrl.expert_iteration import make_act
    from hackmatrix.purejaxrl.value_target import make_value_scale
    from hackmatrix.search import search as search_module

    games = 6
    network = make_network(8, 1)
    parts = types.SimpleNamespace(network=network, value_scale=make_value_scale("raw"))
    rng = np.random.default_rng(3)
    obs = jnp.asarray((rng.random((games, OBS_SIZE)) < 0.05).astype(np.float32))
    mask = jnp.asarray(rng.random((games, NUM_ACTIONS)) < 0.4).at[:, 0].set(True)
    runner = types.SimpleNamespace(obs=obs, env_state=None, shaping_carry=None)
    params = network.init(jax.random.PRNGKey(4), obs[:1])
    weights = jnp.where(mask, jnp.arange(NUM_ACTIONS, dtype=jnp.float32), 0.0)
    weights = weights / weights.sum(-1, keepdims=True)
    searched_move = jnp.argmax(weights, axis=-1)  # the stand-in's move: its last legal one
    calls = []

    def stand_in(params, keys, env_state, **_options):
        calls.append(keys)
        return types.SimpleNamespace(action=searched_move, weights=weights, value=obs[:, 0])

    monkeypatch.setattr(search_module, "search", stand_in)
    config = cfg.TrainConfig(hidden_dim=8, num_layers=1, algorithm="expert-iteration")
    key = jax.random.PRNGKey(5)

    def acted(acting):
        act = make_act(parts, dataclasses.replace(config, search_acting=acting), jax_env)
        return act(params, runner, mask, key, None)

    by_search, by_network = acted("search"), acted("network")
    search_key, sample_key = jax.random.split(key)
    np.testing.assert_array_equal(calls[0], jax.random.split(key, games))
    np.testing.assert_array_equal(calls[1], jax.random.split(search_key, games))
    np.testing.assert_array_equal(by_search.action, searched_move)
    logits, _ = network.apply(params, obs)
    sampled, _ = distribution.sample(sample_key, logits, mask)
    np.testing.assert_array_equal(by_network.action, sampled)
    assert bool(jnp.any(sampled != searched_move))
    log_p = jax.nn.log_softmax(jnp.where(mask, logits, -1e9))
    np.testing.assert_allclose(
        by_network.log_prob, jnp.take_along_axis(log_p, sampled[:, None], axis=-1)[:, 0]
    )
    for out in (by_search, by_network):  # the targets are the search's either way
        np.testing.assert_array_equal(out.search.policy_target, weights)


def _half_searched(games: int, **options) -> cfg.TrainConfig:
    """A tiny network acting over `games` envs, half of them searched each step."""
    return cfg.TrainConfig(
        hidden_dim=8,
        num_layers=1,
        num_envs=games,
        algorithm="expert-iteration",
        search_acting="network",
        search_share=0.5,
        **options,
    )


def test_a_share_searches_the_first_envs_and_leaves_the_rest_unlabelled(monkeypatch):
    """`--search-share 0.5` over 6 envs: the search gets the first 3 games (their keys,
    states and shaper carries), the other rows keep all-zero targets and `searched` false,
    every env plays the network's sample, and the search metrics average the searched rows
    alone."""
    from hackmatrix.purejaxrl import distribution
    from hackmatrix.purejaxrl.expert_iteration import make_act, search_metrics
    from hackmatrix.purejaxrl.value_target import make_value_scale
    from hackmatrix.search import search as search_module

    games, searched = 6, 3
    network = make_network(8, 1)
    parts = types.SimpleNamespace(network=network, value_scale=make_value_scale("raw"))
    rng = np.random.default_rng(7)
    obs = jnp.asarray((rng.random((games, OBS_SIZE)) < 0.05).astype(np.float32))
    mask = jnp.asarray(rng.random((games, NUM_ACTIONS)) < 0.4).at[:, 0].set(True)
    runner = types.SimpleNamespace(obs=obs, env_state=jnp.arange(games), shaping_carry=None)
    params = network.init(jax.random.PRNGKey(4), obs[:1])
    weights = jnp.where(mask[:searched], 1.0, 0.0)
    weights = weights / weights.sum(-1, keepdims=True)
    calls = []

    def stand_in(params, keys, env_state, **_options):
        calls.append((keys, env_state))
        return types.SimpleNamespace(
            action=jnp.zeros(searched, jnp.int32), weights=weights, value=jnp.full(searched, 2.0)
        )

    monkeypatch.setattr(search_module, "search", stand_in)
    config = _half_searched(games)
    key = jax.random.PRNGKey(5)
    out = make_act(parts, config, jax_env)(params, runner, mask, key, None)
    search_key, sample_key = jax.random.split(key)
    keys, states = calls[0]
    np.testing.assert_array_equal(keys, jax.random.split(search_key, games)[:searched])
    np.testing.assert_array_equal(states, np.arange(searched))
    logits, _ = network.apply(params, obs)
    np.testing.assert_array_equal(out.action, distribution.sample(sample_key, logits, mask)[0])
    step = out.search
    np.testing.assert_array_equal(step.searched, [True] * searched + [False] * 3)
    np.testing.assert_array_equal(step.policy_target[:searched], weights)
    np.testing.assert_array_equal(step.policy_target[searched:], 0.0)
    assert float(search_metrics(step)["search/value"]) == 2.0  # the searched rows' mean


class _StagedState(NamedTuple):
    """A stand-in env state: what `--search-select furthest` reads (the stage) and a tag
    that says which env a row came from."""

    stage: jax.Array
    tag: jax.Array


def test_furthest_envs_takes_the_highest_stages_and_draws_among_ties():
    """`furthest_envs`: a game on a higher stage always comes before one on a lower stage;
    among games on the same stage the key decides, each of them taken in some draws."""
    from hackmatrix.purejaxrl.expert_iteration import furthest_envs

    stage = jnp.asarray([1, 5, 2, 5, 7, 1, 5, 3], jnp.int32)
    taken = np.zeros(8, int)
    for seed in range(40):
        rows = np.asarray(furthest_envs(jax.random.PRNGKey(seed), stage, 2))
        assert rows[0] == 4  # the only game on stage 7
        assert rows[1] in (1, 3, 6)  # one of the three on stage 5
        taken[rows] += 1
    assert taken[4] == 40 and all(taken[[1, 3, 6]] > 0) and taken[[0, 2, 5, 7]].sum() == 0


def test_split_envs_takes_half_the_furthest_and_draws_the_rest_from_the_others():
    """`split_envs`: the first ceil(count / 2) rows are `furthest_envs` of the key's first
    half; the rest are other games, each of them drawn in some draws, never twice."""
    from hackmatrix.purejaxrl.expert_iteration import furthest_envs, split_envs

    stage = jnp.asarray([1, 5, 2, 5, 7, 1, 5, 3], jnp.int32)
    drawn = np.zeros(8, int)
    for seed in range(60):
        key = jax.random.PRNGKey(seed)
        rows = np.asarray(split_envs(key, stage, 5))
        top = np.asarray(furthest_envs(jax.random.split(key)[0], stage, 3))
        np.testing.assert_array_equal(rows[:3], top)
        assert rows[0] == 4 and set(rows[1:3]) <= {1, 3, 6}  # stage 7, then two of stage 5
        assert len(set(rows)) == 5
        drawn[rows[3:]] += 1
    others = [0, 2, 5, 7]  # never among the furthest three; each drawn ~60 x 2 / 5 times
    assert all(drawn[others] > 5)
    assert len(np.asarray(split_envs(jax.random.PRNGKey(0), stage, 1))) == 1


def _six_staged_games(seed: int):
    """A tiny network's act inputs over 6 games on stages 1, 5, 2, 6, 7, 1, every action
    legal: `(parts, mask, state, runner, params)`."""
    from hackmatrix.purejaxrl.value_target import make_value_scale

    games = 6
    network = make_network(8, 1)
    parts = types.SimpleNamespace(network=network, value_scale=make_value_scale("raw"))
    rng = np.random.default_rng(seed)
    obs = jnp.asarray((rng.random((games, OBS_SIZE)) < 0.05).astype(np.float32))
    mask = jnp.ones((games, NUM_ACTIONS), bool)
    state = _StagedState(stage=jnp.asarray([1, 5, 2, 6, 7, 1]), tag=jnp.arange(games))
    runner = types.SimpleNamespace(obs=obs, env_state=state, shaping_carry=None)
    params = network.init(jax.random.PRNGKey(4), obs[:1])
    return parts, mask, state, runner, params


@pytest.mark.parametrize("select", ["furthest", "split"])
def test_a_share_selected_by_stage_searches_the_selected_games_in_their_own_rows(
    monkeypatch, select
):
    """`--search-share 0.5 --search-select furthest` over 6 envs: the search gets the 3
    games on the highest stages (their keys and states), each searched row's outputs go back
    to that env's row, and the others keep all-zero targets with `searched` false. With
    `split` the search gets the 2 furthest games and one drawn from the others."""
    from hackmatrix.purejaxrl.expert_iteration import furthest_envs, make_act, split_envs
    from hackmatrix.search import search as search_module

    games, searched = 6, 3
    parts, mask, state, runner, params = _six_staged_games(seed=3)
    calls = []

    def stand_in(params, keys, env_state, **_options):
        calls.append((keys, env_state))
        # each searched row's target says which env it searched: all weight on action `tag`
        weights = jax.nn.one_hot(env_state.tag, NUM_ACTIONS)
        return types.SimpleNamespace(
            action=jnp.zeros(searched, jnp.int32), weights=weights, value=env_state.tag * 1.0
        )

    monkeypatch.setattr(search_module, "search", stand_in)
    config = _half_searched(games, search_select=select)
    key = jax.random.PRNGKey(5)
    out = make_act(parts, config, jax_env)(params, runner, mask, key, None)
    key, _sample_key = jax.random.split(key)
    search_key, select_key = jax.random.split(key)
    selector = furthest_envs if select == "furthest" else split_envs
    rows = np.asarray(selector(select_key, state.stage, searched))
    if select == "furthest":
        assert sorted(rows) == [1, 3, 4]  # stages 7, 6 and 5
    else:
        assert sorted(rows[:2]) == [3, 4] and rows[2] in (0, 1, 2, 5)  # stages 7 and 6
    keys, states = calls[0]
    np.testing.assert_array_equal(states.tag, rows)
    np.testing.assert_array_equal(keys, jax.random.split(search_key, games)[rows])
    step = out.search
    np.testing.assert_array_equal(step.searched, [False, True, False, True, True, False])
    np.testing.assert_array_equal(step.value, [0, 1, 0, 3, 4, 0])
    for env in range(games):
        expected = jax.nn.one_hot(env, NUM_ACTIONS) if env in rows else jnp.zeros(NUM_ACTIONS)
        np.testing.assert_array_equal(step.policy_target[env], expected)


def test_a_scheduled_selection_acts_as_first_before_its_update_and_as_the_selector_after(
    monkeypatch,
):
    """`--search-select split --search-select-from-update N`: with the levers' switch at 0
    the act is `first`'s to the bit (the same search keys, states and outputs, and the same
    network sample); at 1 it is `split`'s."""
    from hackmatrix.purejaxrl.expert_iteration import make_act
    from hackmatrix.purejaxrl.shaping import Levers
    from hackmatrix.search import search as search_module

    games = 6
    parts, mask, state, runner, params = _six_staged_games(seed=11)
    calls = []

    def stand_in(params, keys, env_state, **_options):
        calls.append((keys, env_state.tag))
        weights = jax.nn.one_hot(env_state.tag, NUM_ACTIONS)
        return types.SimpleNamespace(action=env_state.tag, weights=weights, value=keys[:, 0] * 1.0)

    monkeypatch.setattr(search_module, "search", stand_in)
    key = jax.random.PRNGKey(9)

    def acted(config, switch):
        calls.clear()
        levers = Levers(None, None, None if switch is None else jnp.float32(switch))
        out = make_act(parts, config, jax_env)(params, runner, mask, key, levers)
        return out, calls[0]

    scheduled = _half_searched(games, search_select="split", search_select_from_update=5)
    split_throughout = dataclasses.replace(scheduled, search_select_from_update=0)
    for switch, plain in ((0.0, _half_searched(games)), (1.0, split_throughout)):
        got, got_call = acted(scheduled, switch)
        want, want_call = acted(plain, None)
        jax.tree_util.tree_map(np.testing.assert_array_equal, got_call, want_call)
        jax.tree_util.tree_map(np.testing.assert_array_equal, got, want)
    assert sorted(np.asarray(acted(scheduled, 0.0)[1][1])) == [0, 1, 2]  # the first games
    assert {3, 4} <= set(np.asarray(acted(scheduled, 1.0)[1][1]))  # stages 7 and 6


def test_the_ppo_term_is_ppos_own_surrogate_beside_the_searched_rows_cross_entropy():
    """`--search-ppo-coef 0.5 --search-share 0.5`: the loss is the cross-entropy averaged
    over the searched rows, plus half of PPO's clipped surrogate (its own loss function's
    term on the same minibatch), plus the shared value and entropy terms."""
    from hackmatrix.purejaxrl import train as train_module
    from hackmatrix.purejaxrl.expert_iteration import LossInputs, make_loss
    from hackmatrix.purejaxrl.value_target import make_value_scale

    rows = 8
    common = dict(
        num_envs=rows,
        num_steps=1,
        hidden_dim=16,
        num_layers=1,
        ent_coef=0.0,
        num_minibatches=1,
        update_epochs=1,
    )
    config = cfg.TrainConfig(
        **common,
        algorithm="expert-iteration",
        search_acting="network",
        search_share=0.5,
        search_ppo_coef=0.5,
    )
    network = make_network(16, 1)
    rng = np.random.default_rng(9)
    obs = jnp.asarray((rng.random((rows, OBS_SIZE)) < 0.05).astype(np.float32))
    mask = jnp.asarray(rng.random((rows, NUM_ACTIONS)) < 0.4).at[:, 0].set(True)
    searched = jnp.arange(rows) < 4
    target = jnp.where(mask & searched[:, None], rng.random((rows, NUM_ACTIONS)), 0.0)
    target = target / jnp.maximum(target.sum(-1, keepdims=True), 1e-9)
    action = jnp.zeros(rows, jnp.int32)
    old_log_prob = jnp.asarray(rng.normal(size=rows) - 2.0, jnp.float32)
    advantages = jnp.asarray(rng.normal(size=rows), jnp.float32)
    returns = jnp.asarray(rng.normal(size=rows), jnp.float32)
    params = network.init(jax.random.PRNGKey(1), obs[:1])

    loss_fn = make_loss(config, network, make_value_scale("raw"))
    inputs = LossInputs(obs, mask, target, action, old_log_prob, searched)
    total, reported = loss_fn(params, (inputs, advantages, returns))
    ppo = train_module.make_train(cfg.TrainConfig(**common), jax_env).phases["loss_fn"]
    ppo_total, ppo_reported = ppo(
        params, (train_module.LossInputs(obs, mask, action, old_log_prob), advantages, returns)
    )
    logits, _ = network.apply(params, obs)
    log_p = jax.nn.log_softmax(jnp.where(mask, logits, -1e9))
    cross_entropy = -jnp.sum(jnp.where(target > 0, target * log_p, 0.0), -1)
    by_hand = float(cross_entropy[:4].mean()) + 0.5 * float(ppo_reported["train/pg_loss"])
    np.testing.assert_allclose(float(reported["train/policy_loss"]), by_hand, rtol=1e-5)
    np.testing.assert_allclose(float(reported["train/pg_loss"]), ppo_reported["train/pg_loss"])
    np.testing.assert_allclose(
        float(total - reported["train/policy_loss"]),
        float(ppo_total - ppo_reported["train/pg_loss"]),  # the value and entropy terms
        rtol=1e-5,
        atol=1e-6,
    )


def test_the_gate_keeps_labels_where_the_searched_move_beats_the_greedy_one_by_the_gap():
    from hackmatrix.purejaxrl.expert_iteration import confident

    q = jnp.asarray([[0.0, 1.0, 0.5], [2.0, 1.0, 0.0], [0.0, 0.3, 0.2], [1.0, 1.0, 1.0]])
    best = jnp.asarray([1, 0, 1, 2])
    greedy = jnp.asarray([0, 1, 2, 2])  # the last: the same move, a gap of 0
    np.testing.assert_array_equal(confident(q, best, greedy, 0.5), [True, True, False, False])
    # --search-keep-agreeing: the agreeing row keeps its label; disagreements stay gated.
    kept = confident(q, best, greedy, 0.5, keep_agreeing=True)
    np.testing.assert_array_equal(kept, [True, True, False, True])


def searched_act(monkeypatch, network, params, obs, mask, search_out, **options):
    """One act step of a small run whose network acts and whose first half of the envs is
    searched, the search replaced by `search_out` (its fields as `search` returns them):
    the run's config and the step's SearchStep."""
    from hackmatrix.purejaxrl.expert_iteration import make_act
    from hackmatrix.purejaxrl.value_target import make_value_scale
    from hackmatrix.search import search as search_module

    monkeypatch.setattr(search_module, "search", lambda *_args, **_options: search_out)
    games = obs.shape[0]
    config = cfg.TrainConfig(
        hidden_dim=8,
        num_layers=1,
        num_envs=games,
        num_steps=1,
        num_minibatches=1,
        update_epochs=1,
        algorithm="expert-iteration",
        search_acting="network",
        search_share=0.5,
        **options,
    )
    parts = types.SimpleNamespace(network=network, value_scale=make_value_scale("raw"))
    runner = types.SimpleNamespace(obs=obs, env_state=jnp.arange(games), shaping_carry=None)
    acted = make_act(parts, config, jax_env)(params, runner, mask, jax.random.PRNGKey(5), None)
    return config, acted.search


def test_a_gated_act_marks_confident_rows_and_the_loss_drops_the_others(monkeypatch):
    """`--search-min-q-gap 0.5 --search-share 0.5`: the act step marks the searched rows
    whose searched move's Q beats the network's greedy move's by 0.5 (unsearched rows are
    never confident); in the loss an unconfident row weighs as a searched row with no
    target: the same loss as zeroing its target, averaged over the searched rows."""
    from hackmatrix.purejaxrl import distribution
    from hackmatrix.purejaxrl.expert_iteration import (
        LossInputs,
        make_loss,
        search_metrics,
    )
    from hackmatrix.purejaxrl.value_target import make_value_scale

    games, searched = 6, 3
    network = make_network(8, 1)
    rng = np.random.default_rng(11)
    obs = jnp.asarray((rng.random((games, OBS_SIZE)) < 0.05).astype(np.float32))
    mask = jnp.ones((games, NUM_ACTIONS), bool)
    params = network.init(jax.random.PRNGKey(4), obs[:1])
    logits, _ = network.apply(params, obs)
    greedy = np.asarray(distribution.greedy(logits, mask))[:searched]
    moves = (greedy + 1) % NUM_ACTIONS  # the search disagrees everywhere
    weights = jax.nn.one_hot(moves, NUM_ACTIONS)
    q = np.zeros((searched, NUM_ACTIONS), np.float32)
    q[np.arange(searched), moves] = [1.0, 0.4, 0.6]  # gaps over the greedy move's 0

    out = types.SimpleNamespace(
        action=jnp.asarray(moves), weights=weights, value=jnp.zeros(searched), q=jnp.asarray(q)
    )
    config, step = searched_act(monkeypatch, network, params, obs, mask, out, search_min_q_gap=0.5)
    np.testing.assert_array_equal(step.confident, [True, False, True, False, False, False])
    assert float(search_metrics(step)["search/confident"]) == pytest.approx(2 / 3)

    loss_fn = make_loss(config, network, make_value_scale("raw"))
    zeros = jnp.zeros(games)
    inputs = LossInputs(obs, mask, step.policy_target, searched=step.searched)
    gated, _ = loss_fn(params, (inputs._replace(confident=step.confident), zeros, zeros))
    kept = jnp.where(step.confident[:, None], step.policy_target, 0.0)
    zeroed, _ = loss_fn(params, (inputs._replace(policy_target=kept), zeros, zeros))
    np.testing.assert_allclose(float(gated), float(zeroed), rtol=1e-6)
    ungated, _ = loss_fn(params, (inputs, zeros, zeros))
    assert float(ungated) > float(gated)  # the dropped row's cross-entropy is gone


def test_the_search_advantage_is_q_less_value_where_the_search_measured():
    from hackmatrix.purejaxrl.expert_iteration import search_advantage

    q = jnp.asarray([[1.5, 0.5, 1.0, 9.0], [0.0, 2.0, 2.0, 2.0]])
    value = jnp.asarray([1.0, 2.0])  # an unvisited action's Q is the value: advantage 0
    mask = jnp.asarray([[True, True, True, False], [True, True, True, True]])
    np.testing.assert_allclose(
        search_advantage(q, value, mask), [[0.5, -0.5, 0.0, 0.0], [-2.0, 0.0, 0.0, 0.0]]
    )


def test_the_all_action_surrogate_is_the_expected_advantage_inside_the_clip():
    """At the acting policy the loss is `-sum pi A` and its gradient in the logits is the
    all-action policy gradient `-pi(a)(A(a) - sum pi A)`; an action whose ratio is past
    the clip in the direction its advantage pushes gets no more gradient."""
    from hackmatrix.purejaxrl.expert_iteration import all_action_surrogate

    mask = jnp.asarray([[True, True, True, False]])
    advantage = jnp.asarray([[1.0, -0.5, 0.0, 0.0]])
    logits = jnp.asarray([[0.2, 1.0, -0.3, 0.0]])

    def log_policy(x):
        return jax.nn.log_softmax(jnp.where(mask, x, -1e9))

    old = log_policy(logits)

    def loss(x):
        return all_action_surrogate(log_policy(x), old, advantage, mask, 0.2)[0].sum()

    pi = jnp.exp(old)
    np.testing.assert_allclose(float(loss(logits)), -float(jnp.sum(pi * advantage)), rtol=1e-6)
    expected = -pi * (advantage - jnp.sum(pi * advantage))
    np.testing.assert_allclose(jax.grad(loss)(logits), expected, atol=1e-6)

    # Action 0 already 1.5x likelier than when it acted (past 1 + 0.2, A > 0): clipped.
    moved = old.at[0, 0].add(jnp.log(1.5))
    per_action = jax.grad(lambda lp: all_action_surrogate(lp, old, advantage, mask, 0.2)[0].sum())(
        moved
    )
    assert float(per_action[0, 0]) == 0.0
    assert float(per_action[0, 1]) > 0.0  # A < 0, inside the clip: still pushed down
    _, clipped_share = all_action_surrogate(moved, old, advantage, mask, 0.2)
    np.testing.assert_allclose(clipped_share, pi[:, 0], rtol=1e-6)


def test_moving_only_teaches_which_way_to_move_and_leaves_siphon_and_programs_alone():
    """`--search-advantage-actions moves`: the surrogate runs on the policy conditioned on
    moving. Its gradient is 0 on the logits of SIPHON and the programs whatever their
    advantages, on the moves it is the conditional all-action gradient weighted by
    pi_old(moves), and the moves' logits move by a sum of 0 (the mass on moving holds to
    first order)."""
    from hackmatrix.purejaxrl.expert_iteration import all_action_surrogate, moving_only

    mask = jnp.asarray([[True, True, False, True, True, True, True] + [False] * 21])
    advantage = jnp.zeros((1, 28)).at[0, :7].set(jnp.asarray([1.0, -0.5, 0, 0.3, -2.0, 3.0, 0]))
    logits = jnp.zeros((1, 28)).at[0, :7].set(jnp.asarray([0.2, 1.0, 0, -0.3, 1.5, 0.4, -1.0]))

    def log_policy(x):
        return jax.nn.log_softmax(jnp.where(mask, x, -1e9))

    old = log_policy(logits)

    def loss(x):
        inputs = moving_only(log_policy(x), old, advantage, mask)
        return all_action_surrogate(*inputs, 0.2)[0].sum()

    grad = jax.grad(loss)(logits)
    # Siphon (A = -2) and the programs (A = 3): 0 up to the log-softmax's rounding.
    np.testing.assert_allclose(grad[0, 4:], 0.0, atol=1e-7)
    pi = jnp.exp(old)[0]
    moves = jnp.asarray([0, 1, 3])
    moving = float(pi[moves].sum())
    conditional = pi[moves] / moving
    a = advantage[0, moves]
    expected = -moving * conditional * (a - jnp.sum(conditional * a))
    np.testing.assert_allclose(grad[0, moves], expected, atol=1e-6)
    assert abs(float(grad[0, :4].sum())) < 1e-6
    np.testing.assert_allclose(float(loss(logits)), -float(jnp.sum(pi[moves] * a)), rtol=1e-5)

    # A row with no legal move contributes nothing.
    only_siphon = jnp.zeros((1, 28), bool).at[0, 4].set(True)
    lp = jax.nn.log_softmax(jnp.where(only_siphon, logits, -1e9))
    rows, clipped = all_action_surrogate(*moving_only(lp, lp, advantage, only_siphon), 0.2)
    assert float(rows[0]) == 0.0 and float(clipped[0]) == 0.0


def test_an_advantage_act_keeps_the_searchs_q_and_the_loss_is_its_surrogate(monkeypatch):
    """`--search-policy-target advantage --search-share 0.5`: the act step keeps each
    searched row's advantages (the search's Q less its value, legal actions only) and the
    network's log-policy at acting time, zeros elsewhere; the loss's policy term is the
    all-action surrogate on PPO's advantage scale averaged over the searched rows, and one
    gradient step raises the measured best action's probability."""
    from hackmatrix.purejaxrl.expert_iteration import (
        LossInputs,
        all_action_surrogate,
        make_loss,
        make_loss_inputs,
        moving_only,
    )
    from hackmatrix.purejaxrl.value_target import make_value_scale

    games, searched = 6, 3
    network = make_network(8, 1)
    rng = np.random.default_rng(12)
    obs = jnp.asarray((rng.random((games, OBS_SIZE)) < 0.05).astype(np.float32))
    mask = jnp.asarray(rng.random((games, NUM_ACTIONS)) < 0.5).at[:, :2].set(True)
    params = network.init(jax.random.PRNGKey(6), obs[:1])
    q = np.zeros((searched, NUM_ACTIONS), np.float32)
    q[:, 1] = 2.0  # the search measured action 1 well above the value of 0.5
    value = jnp.full(searched, 0.5)

    weights = jax.nn.one_hot(jnp.ones(searched, jnp.int32), NUM_ACTIONS)
    out = types.SimpleNamespace(
        action=jnp.ones(searched, jnp.int32), weights=weights, value=value, q=jnp.asarray(q)
    )
    config, step = searched_act(
        monkeypatch, network, params, obs, mask, out, ent_coef=0.0, search_policy_target="advantage"
    )
    logits, _ = network.apply(params, obs)
    log_p = jax.nn.log_softmax(jnp.where(mask, logits, -1e9))
    expected = np.where(np.asarray(mask[:searched]), q - 0.5, 0.0)
    np.testing.assert_allclose(step.advantage[:searched], expected)
    np.testing.assert_array_equal(step.advantage[searched:], 0.0)
    np.testing.assert_allclose(step.log_policy[:searched], log_p[:searched], rtol=1e-6)
    np.testing.assert_array_equal(step.log_policy[searched:], 0.0)

    traj = types.SimpleNamespace(obs=obs, mask=mask, search=step, action=None, log_prob=None)
    inputs = make_loss_inputs(config)(traj)
    assert isinstance(inputs, LossInputs) and inputs.advantage is not None
    advantages = jnp.asarray(rng.normal(size=games), jnp.float32)  # PPO's (raw) GAE
    loss_fn = make_loss(config, network, make_value_scale("raw"))
    zeros = jnp.zeros(games)
    _, reported = loss_fn(params, (inputs, advantages, zeros))
    scale = float(jnp.std(advantages)) + 1e-8
    rows, _ = all_action_surrogate(log_p, step.log_policy, step.advantage / scale, mask, 0.2)
    np.testing.assert_allclose(
        float(reported["train/policy_loss"]), float(rows.sum()) / searched, rtol=1e-5
    )
    grads = jax.grad(lambda p: loss_fn(p, (inputs, advantages, zeros))[0])(params)
    stepped = jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads)
    new_logits, _ = network.apply(stepped, obs)
    new_log_p = jax.nn.log_softmax(jnp.where(mask, new_logits, -1e9))
    assert bool(jnp.all(new_log_p[:searched, 1] > log_p[:searched, 1]))

    # --search-advantage-actions moves: the same rows through `moving_only`.
    moves_config = dataclasses.replace(config, search_advantage_actions="moves")
    _, reported = make_loss(moves_config, network, make_value_scale("raw"))(
        params, (inputs, advantages, zeros)
    )
    moving = moving_only(log_p, step.log_policy, step.advantage / scale, mask)
    rows, _ = all_action_surrogate(*moving, 0.2)
    np.testing.assert_allclose(
        float(reported["train/policy_loss"]), float(rows.sum()) / searched, rtol=1e-5
    )


# ------------------------------------------------------------------ through the CLI


@pytest.fixture(scope="module")
def ei_run(tmp_path_factory):
    """Three updates of expert iteration (two chunks) through the CLI."""
    root = tmp_path_factory.mktemp("ei")
    code, run_dir = train(root, "ei", 3)
    assert code == 0
    return root, run_dir


def test_a_run_writes_checkpoints_and_search_metrics(ei_run):
    _, run_dir = ei_run
    payload = load_checkpoint(run_dir / "checkpoint_3.pkl")
    assert payload["config"]["algorithm"] == "expert-iteration"
    assert payload["config"]["search_simulations"] == 2
    records = [r for r in metrics_of(run_dir) if "search/kl" in r]
    assert [r["update"] for r in records] == [2, 3]
    for record in records:
        assert 0.0 <= record["search/agreement"] <= 1.0
        assert record["search/kl"] >= -1e-5 and record["search/target_entropy"] >= 0.0
        assert np.isfinite(record["train/policy_loss"]) and np.isfinite(record["train/vf_loss"])
        assert "train/approx_kl" not in record  # PPO's, not computed here
        assert record["stats/empty_mask_steps"] == 0
    assert (run_dir / "final_params.npz").is_file()


def test_its_checkpoint_plays_like_any_other(ei_run):
    """Every tool that plays a policy loads it through `load_policy_spec`: the run's latest
    checkpoint gives the run's network with the checkpoint's weights, which acts on a game's
    observation. (What the tools do with a loaded policy does not depend on the algorithm
    that trained it: tests/analysis/test_behaviour.py plays loaded checkpoints.)"""
    from hackmatrix.analysis.policies import load_policy_spec

    _, run_dir = ei_run
    policy = load_policy_spec(str(run_dir))
    assert policy.config["algorithm"] == "expert-iteration"
    stored = load_checkpoint(latest_checkpoint(run_dir))["params"]
    same = jax.tree_util.tree_map(np.array_equal, policy.params, stored)
    assert all(jax.tree_util.tree_leaves(same))
    obs, _ = jax_env.reset(jax.random.PRNGKey(0))
    logits, value = policy.network.apply(policy.params, obs[None])
    assert logits.shape == (1, NUM_ACTIONS) and value.shape == (1,)
    assert np.isfinite(np.asarray(logits)).all() and np.isfinite(np.asarray(value)).all()


def test_a_resume_continues_the_algorithm(ei_run, capsys):
    root, run_dir = ei_run
    before = load_checkpoint(run_dir / "checkpoint_3.pkl")
    # Neither --algorithm nor the search's options: the checkpoint's are continued.
    argv = [*BATCH_FLAGS, "--resume", str(run_dir)]
    code = cli.main([*argv, "--total-timesteps", str(4 * BATCH), "--checkpoint-dir", str(root)])
    assert code == 0
    out = capsys.readouterr().out
    assert "Resuming run ei from checkpoint_3.pkl (update 3)" in out
    after = load_checkpoint(run_dir / "checkpoint_4.pkl")
    assert after["config"]["algorithm"] == "expert-iteration"
    assert after["config"]["search_simulations"] == 2
    assert after["metrics"]["search/kl"] >= -1e-5
    assert after["optimizer_step"] == before["optimizer_step"] + 2  # 2 minibatches, 1 epoch


def test_init_from_starts_a_fresh_run_from_a_checkpoints_weights(ei_run, tmp_path, capsys):
    root, run_dir = ei_run
    # A PPO-shaped checkpoint of the same network, weights of another seed.
    network = make_network(32, 2)
    weights = network.init(jax.random.PRNGKey(123), np.zeros((1, OBS_SIZE), np.float32))
    runner = types.SimpleNamespace(
        train_state=types.SimpleNamespace(params=weights, opt_state={}, step=0),
        rng=np.zeros(2, np.uint32),
    )
    stored = {"network": "mlp", "hidden_dim": 32, "num_layers": 2, "algorithm": "ppo"}
    (tmp_path / "ppo").mkdir()
    save_checkpoint(
        tmp_path / "ppo",
        7,
        runner,
        stored,
        metrics={},
        metrics_history=[],
        last_logged_step=7,
        include_env_state=False,
    )
    template = jax.tree_util.tree_map(np.zeros_like, weights)
    loaded, source, config = load_initial_params(tmp_path / "ppo", stored, template)
    assert source.name == "checkpoint_7.pkl" and config["algorithm"] == "ppo"
    jax.tree_util.tree_map(np.testing.assert_array_equal, loaded, weights)
    with pytest.raises(CheckpointError, match="give --network mlp --hidden-dim 32 --num-layers 2"):
        load_initial_params(tmp_path / "ppo", {**stored, "hidden_dim": 64}, template)

    # The same run as the fixture's (same seed and config) but from those weights: only the
    # starting weights differ, so its weights after two updates must differ too.
    code, fresh = train(root, "from-ppo", 3, "--init-from", str(tmp_path / "ppo"))
    assert code == 0
    assert "Initialised the network from" in capsys.readouterr().out
    assert load_checkpoint(fresh / "checkpoint_3.pkl")["step"] == 3
    trained = zip(params_of(fresh / "checkpoint_2.pkl"), params_of(run_dir / "checkpoint_2.pkl"))
    assert not all(np.array_equal(a, b) for a, b in trained)


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("HACKMATRIX_SLOW"),
    reason="set HACKMATRIX_SLOW=1 for the scheduled selection's three compiles (~160 s); "
    "CI checks its act and its schedule",
)
def test_a_scheduled_selection_is_first_resumed_with_the_selector(tmp_path):
    """`--search-select split --search-select-from-update 3` over 5 updates is, bit for
    bit, a run of `first` for 3 updates (the fewest a run takes) resumed to 5 with
    `--search-select split`: the switch comes in inside the second chunk (updates 2-3),
    where the chain cut its chunks at update 3."""
    share = ["--search-acting", "network", "--search-share", "0.5"]
    select = ["--search-select", "split"]
    code, scheduled = train(
        tmp_path, "scheduled", 5, *share, *select, "--search-select-from-update", "3"
    )
    assert code == 0
    code, chain = train(tmp_path, "chain", 3, *share)
    assert code == 0
    argv = [*BATCH_FLAGS, "--resume", str(chain), *select, "--total-timesteps", str(5 * BATCH)]
    assert cli.main([*argv, "--checkpoint-dir", str(tmp_path)]) == 0
    ours, theirs = params_of(scheduled / "checkpoint_5.pkl"), params_of(chain / "checkpoint_5.pkl")
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    records = [r for r in metrics_of(scheduled) if "train/search_select" in r]
    # each chunk's share of updates past the switch: updates 0-1, 2-3 (switching), 4
    assert [r["train/search_select"] for r in records] == [0.0, 0.5, 1.0]


def test_a_time_limit_stops_after_the_chunk_that_passes_it(ei_run, capsys):
    root, _ = ei_run
    code, run_dir = train(root, "timed", 100, "--time-limit-minutes", "0.0001")
    assert code == 0
    assert "Time limit of 0.0001 minutes reached at update 2 of 100" in capsys.readouterr().out
    assert load_checkpoint(run_dir / "checkpoint_2.pkl")["step"] == 2
    assert (run_dir / "final_params.npz").is_file()
    assert not (run_dir / "checkpoint_4.pkl").exists()
