"""Leaf rollouts (specs/search.md §3.6): a node's value after K steps of greedy play.

`rolled_out_value` is checked against a plain Python walk over three mid-game states
(states.jsonl.gz): the network's argmax over its masked logits, the env's step, the
UNDO correction and the undiscounted UNDO of §3.3, discount 0 once the game has ended,
and the network's value where the walk stops. The three are chosen so that, with this
tiny random network, two walks end their game and one runs an UNDO within the K steps,
and the test checks that they do, so those branches are exercised. The search with
rollouts is held fair by test_fairness.py.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from hackmatrix import jax_env
from hackmatrix.jax_env.constants import RUNNING
from hackmatrix.purejaxrl.network import make_network
from hackmatrix.search.search import (
    UNDO_ACTION,
    SearchConfig,
    _network_outputs,
    rolled_out_value,
    tree_reward_for_run,
    undo_correction,
)

from . import pairs
from .test_undo import STEP  # the env's batched step over three states, compiled once

K = 6
STATES = (4, 9, 20)  # two walks end their game, one UNDOs (this network, K = 6)
CONFIG = SearchConfig(leaf_rollout=K)


@pytest.fixture(scope="module")
def setting():
    network = make_network(8, 1)
    params = network.init(jax.random.PRNGKey(0), jnp.zeros((1, jax_env.env.OBS_SIZE)))
    every = pairs.states()
    states = pairs.stack([jax_env.state_from_json(every[i]) for i in STATES])
    return network, params, states


def _walk_by_hand(network, params, states):
    """The rollout's value, one Python step at a time, and what the walks did."""
    outputs = jax.jit(
        lambda s: _network_outputs(network, CONFIG, params, s, jax.vmap(jax_env.action_mask)(s))
    )
    correction = jax.jit(jax.vmap(undo_correction))
    n = states.stage.shape[0]
    total, weight = np.zeros(n, np.float32), np.ones(n, np.float32)
    ended_on_walk, undone = np.zeros(n, bool), np.zeros(n, bool)
    state = states
    for _ in range(K):
        logits, _ = outputs(state)
        action = jnp.argmax(logits, -1).astype(jnp.int32)
        new, reward, _, info = STEP(state, action)
        reward = np.asarray(reward, np.float32)
        undo = np.asarray((action == UNDO_ACTION) & ~info["invalid_action"])
        reward = reward + np.where(undo, np.asarray(correction(state.board, new.board, info)), 0)
        over = np.asarray(state.outcome != RUNNING)
        ended = np.asarray(new.outcome != RUNNING)
        total = total + weight * np.where(over, 0.0, reward)
        weight = weight * np.where(ended, 0.0, np.where(undo, 1.0, np.float32(CONFIG.discount)))
        ended_on_walk |= ended & ~over
        undone |= undo
        state = new
    _, last_value = outputs(state)
    return total + weight * np.asarray(last_value), ended_on_walk, undone


def test_a_rolled_out_value_is_the_walks_discounted_return_and_its_last_value(setting):
    network, params, states = setting
    mask = jax.vmap(jax_env.action_mask)(states)
    logits, value = _network_outputs(network, CONFIG, params, states, mask)
    undos = jnp.zeros(states.stage.shape[0], jnp.int32)

    @jax.jit
    def rolled(states, undos, logits, value):
        return rolled_out_value(network, CONFIG, params, None, states, undos, {}, logits, value)

    got = np.asarray(rolled(states, undos, logits, value))
    want, ended_on_walk, undone = _walk_by_hand(network, params, states)
    assert ended_on_walk.sum() == 2 and undone.any()  # both branches are walked
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert not np.allclose(got, np.asarray(value))  # it is not the value alone
    # K = 0 is the value itself, untouched.
    plain = SearchConfig()
    same = rolled_out_value(network, plain, params, None, states, undos, {}, logits, value)
    assert same is value


def test_leaf_rollouts_are_checked():
    with pytest.raises(ValueError, match="leaf_rollout must be >= 0"):
        SearchConfig(leaf_rollout=-1)
    with pytest.raises(ValueError, match="needs worlds 1"):
        SearchConfig(leaf_rollout=2, worlds=2)
    tree = tree_reward_for_run({"program_bonus": 4.0, "siphon_pay_on_use": True})
    assert SearchConfig(leaf_rollout=2, tree_reward=tree).leaf_rollout == 2
