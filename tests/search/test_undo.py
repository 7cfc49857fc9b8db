"""UNDO is not a value pump inside the search (specs/search.md §3.3).

UNDO restores an earlier board and the env pays again for taking what it
restored: a loop "take it, UNDO back" earns the env's reward on every pass.
Each scenario here runs one such loop through the search's own model step
(`recurrent_fn`) from a crafted state and checks that the search's return for
the loop is its four step penalties, while the env's is positive, and that
the loop ends on the board it started from. The loops: walk onto a data
siphon (+1), shoot a transmission (+0.3), step toward the exit (+0.05).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from hackmatrix import jax_env
from hackmatrix.jax_env.json_reader import SNAPSHOT_KEYS
from hackmatrix.jax_env.step import step_state
from hackmatrix.purejaxrl.distribution import MASKED_LOGIT
from hackmatrix.purejaxrl.network import make_network
from hackmatrix.search.search import (
    UNDO_ACTION,
    Embedding,
    SearchConfig,
    _recurrent_fn,
)

UP, DOWN, WAIT = 0, 1, 10
STEP_PENALTY = -0.01
WAIT_ENERGY = -0.05  # WAIT spends 1 energy (resource_gain -0.05); no UNDO gives it back


def _state(transmissions=()) -> dict:
    """Stage 1, player at (1,0) with WAIT and UNDO, exit at (5,5), a data siphon at (0,0),
    one snapshot of this very board in the history."""
    d = {
        "player": {"row": 1, "col": 0, "hp": 3, "credits": 5, "energy": 10},
        "ownedPrograms": [WAIT, UNDO_ACTION],
        "exit": {"row": 5, "col": 5},
        "resources": [{"row": 0, "col": 0, "credits": 0, "energy": 0, "dataSiphon": True}],
        "transmissions": list(transmissions),
        "stage": 1,
    }
    board = jax_env.state_to_json(jax_env.state_from_json(d))
    board["undoHistory"] = [{k: board[k] for k in SNAPSHOT_KEYS}]
    return board


# The env's own batched step, shared with test_tree_reward.py (same function, same batch of
# three: one compile, through the persistent cache when the files run in two processes).
STEP = jax.jit(jax.vmap(step_state))

SCENARIOS = {
    # name: (state, actions, what the env pays on the loop beyond its step penalties)
    "data siphon": (_state(), [WAIT, DOWN, UNDO_ACTION, UNDO_ACTION], 1.0 + 0.05),
    "kill": (
        _state([{"row": 4, "col": 0, "turnsRemaining": 4, "enemyType": "virus"}]),
        [WAIT, UP, UNDO_ACTION, UNDO_ACTION],
        0.3,
    ),
    "distance": (_state(), [WAIT, UP, UNDO_ACTION, UNDO_ACTION], 0.05),
}


@pytest.fixture(scope="module")
def loops():
    network = make_network(8, 1)
    params = network.init(jax.random.PRNGKey(0), jnp.zeros((1, jax_env.env.OBS_SIZE)))
    recurrent_fn = _recurrent_fn(network, SearchConfig(undo_cap=2))

    search_step = jax.jit(lambda a, e: recurrent_fn((params, None), None, a, e))

    def model(actions, embedding):
        """The search's step and, beside it, the env's own reward for the same step."""
        out, embedding_after = search_step(actions, embedding)
        return out, embedding_after, STEP(embedding.state, actions)[1]

    names = list(SCENARIOS)
    starts = [jax_env.state_from_json(SCENARIOS[n][0]) for n in names]
    state = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *starts)
    embedding = Embedding(state, jnp.zeros(len(names), jnp.int32))
    search_rewards, env_rewards, priors, discounts = [], [], [], []
    for t in range(4):
        actions = jnp.asarray([SCENARIOS[n][1][t] for n in names], jnp.int32)
        out, embedding, env_reward = model(actions, embedding)
        if t == 0:
            after_wait = embedding.state
        search_rewards.append(np.asarray(out.reward))
        env_rewards.append(np.asarray(env_reward))
        priors.append(np.asarray(out.prior_logits))
        discounts.append(np.asarray(out.discount))
    assert np.all(np.array(discounts)[:2] == np.float32(0.99))
    assert np.all(np.array(discounts)[2:] == 1.0)  # an UNDO goes back in time: not discounted
    return names, after_wait, embedding, np.array(search_rewards), np.array(env_rewards), priors


def test_a_loop_of_undo_earns_only_what_it_costs(loops):
    names, after_wait, end, search_rewards, env_rewards, _ = loops
    for k, name in enumerate(names):
        pays = SCENARIOS[name][2]
        cost = 4 * STEP_PENALTY + WAIT_ENERGY
        assert env_rewards[:, k].sum() == pytest.approx(cost + pays, abs=1e-5), name
        assert search_rewards[:, k].sum() == pytest.approx(cost, abs=1e-5), name
        # The steps before the UNDOs are paid as the env pays them.
        assert np.array_equal(search_rewards[:2, k], env_rewards[:2, k]), name
        # ... and the loop ends on the board it started from (after the WAIT).
        after = jax_env.state_to_json(jax.tree_util.tree_map(lambda x, k=k: x[k], end.state))
        before = jax_env.state_to_json(jax.tree_util.tree_map(lambda x, k=k: x[k], after_wait))
        for key in ("player", "enemies", "transmissions", "resources", "blocks"):
            assert after[key] == before[key], (name, key)


def test_the_undo_cap_masks_undo_on_a_path(loops):
    names, _, end, _, _, priors = loops
    assert np.all(np.asarray(end.undos) == 2)
    # After the first UNDO (cap 2) UNDO is still offered where the history allows it;
    # after the second it is masked on every path.
    assert np.all(priors[3][:, UNDO_ACTION] == MASKED_LOGIT)
