"""The tree can add the reward the value head learns (specs/search.md §3.4).

A network trained on a shaped reward (the default's: a data siphon paid when spent, a
program taken pays 4, programs spend for free, the siphon-death penalty at 0.3) values a
state in that reward's units. With `TreeReward` the search's model step pays the same
shaped reward the trainer computes for the same step, and the honest UNDO (§3.3) stays
honest in it: each UNDO loop of test_undo.py earns only its step penalties.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from hackmatrix import jax_env
from hackmatrix.jax_env import REWARD_COMPONENT_NAMES
from hackmatrix.jax_env.constants import SIPHON_ACTION
from hackmatrix.purejaxrl import shaping
from hackmatrix.purejaxrl.network import make_network
from hackmatrix.purejaxrl.resolve import resolve_command_line
from hackmatrix.search.search import (
    Embedding,
    SearchConfig,
    TreeReward,
    _recurrent_fn,
    _tree_reward,
    config_for_policy,
    tree_reward_for_run,
    tree_reward_named,
)

from .test_undo import SCENARIOS, STEP, STEP_PENALTY, WAIT

NAMES = tuple(REWARD_COMPONENT_NAMES)


@pytest.fixture(scope="module")
def default_tree() -> TreeReward:
    tree = tree_reward_for_run(resolve_command_line([]).config)  # the default preset's run
    assert tree is not None
    return tree


@pytest.fixture(scope="module")
def model(default_tree):
    network = make_network(8, 1)
    params = network.init(jax.random.PRNGKey(0), jnp.zeros((1, jax_env.env.OBS_SIZE)))
    recurrent_fn = _recurrent_fn(network, SearchConfig(tree_reward=default_tree))

    @jax.jit
    def step(actions, embedding):
        return recurrent_fn((params, default_tree.constant_levers()), None, actions, embedding)

    return step


def _batch(states):
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)


def test_a_run_gives_its_shapers_and_final_weights(default_tree):
    assert [s.name for s in default_tree.shapers] == [
        "reward_weights",
        "program_bonus",
        "free_program_spending",
        "siphon_pay_on_use",
    ]
    assert default_tree.weights[NAMES.index("siphon_death_penalty")] == pytest.approx(0.3)
    assert tree_reward_for_run(resolve_command_line(["--preset", "canonical"]).config) is None
    # A stored config (a checkpoint's mapping) gives the same tree.
    stored = {"siphon_pay_on_use": True, "reward_weights": {"kills": 0.5}}
    tree = tree_reward_for_run(stored)
    assert [s.name for s in tree.shapers] == ["reward_weights", "siphon_pay_on_use"]
    assert tree.weights[NAMES.index("kills")] == 0.5


def test_a_tree_step_pays_what_the_trainer_pays(model, default_tree):
    """A siphon (paid when spent), a move onto a data siphon and a WAIT (a program: free)."""
    start = SCENARIOS["data siphon"][0]
    start = {**start, "player": {**start["player"], "dataSiphons": 1}}
    state = _batch([jax_env.state_from_json(start)] * 3)  # the batch of the loops below
    actions = jnp.asarray([SIPHON_ACTION, 1, WAIT], jnp.int32)
    out, _ = model(actions, Embedding(state, jnp.zeros(3, jnp.int32), {}))
    _, reward, done, info = STEP(state, actions)
    components = jnp.stack([info["reward_components"][n] for n in NAMES], -1)
    facts = shaping.StepFacts(actions, reward, components, done, info)
    trained, _, _ = shaping.shape(default_tree.shapers, facts, {}, default_tree.constant_levers())
    np.testing.assert_array_equal(np.asarray(out.reward), np.asarray(trained))
    # The siphon is paid 1 more than the env pays it, the step onto the data siphon 1 less,
    # and WAIT's energy is given back.
    np.testing.assert_allclose(np.asarray(out.reward - reward), [1.0, -1.0, 0.05], atol=1e-6)


def test_undo_loops_earn_only_their_step_penalties(model):
    """Under the default's reward WAIT spends for free and a pickup pays nothing, so each
    loop (take it, UNDO twice) costs exactly its four step penalties."""
    names = list(SCENARIOS)
    state = _batch([jax_env.state_from_json(SCENARIOS[n][0]) for n in names])
    embedding = Embedding(state, jnp.zeros(len(names), jnp.int32), {})
    total = np.zeros(len(names))
    for t in range(4):
        actions = jnp.asarray([SCENARIOS[n][1][t] for n in names], jnp.int32)
        out, embedding = model(actions, embedding)
        total += np.asarray(out.reward)
    np.testing.assert_allclose(total, 4 * STEP_PENALTY, atol=1e-5)


def test_play_time_tools_choose_the_tree_reward_by_name(default_tree):
    stored = {"siphon_pay_on_use": True, "gamma": 0.97}
    trained = config_for_policy(stored, tree_reward="trained")
    assert [s.name for s in trained.tree_reward.shapers] == ["siphon_pay_on_use"]
    assert trained.discount == pytest.approx(0.97)
    assert config_for_policy(stored, tree_reward="env").tree_reward is None
    assert config_for_policy(stored).tree_reward is None  # the env's unless asked
    with pytest.raises(ValueError, match="tree_reward must be one of"):
        config_for_policy(stored, tree_reward="shaped")
    hash(trained)  # a jitted search is compiled per config: it must stay hashable


def test_the_unweighted_tree_keeps_the_levers_and_drops_the_weights(default_tree):
    config = resolve_command_line([]).config
    tree = tree_reward_named("trained-unweighted", config)
    assert tree is not None and not tree.weighted and tree.weights is None
    assert tree.name == "trained-unweighted" and default_tree.name == "trained"
    assert [s.name for s in tree.shapers] == [
        "program_bonus",
        "free_program_spending",
        "siphon_pay_on_use",
    ]
    # Weights were all this run shaped: its unweighted tree is the env's reward.
    assert tree_reward_named("trained-unweighted", {"reward_weights": {"kills": 0.5}}) is None
    assert tree_reward_named("env", config) is None
    with pytest.raises(ValueError, match="tree_reward must be one of"):
        tree_reward_named("weighted", config)
    picked = config_for_policy({"siphon_pay_on_use": True}, tree_reward="trained-unweighted")
    assert picked.tree_reward.name == "trained-unweighted"


def test_an_unweighted_tree_step_ignores_the_weights_a_trainer_passes():
    """A trainer passes its levers, weights included; the unweighted tree pays every
    component at its game weight all the same (the siphon death at its full price)."""
    tree = tree_reward_named("trained-unweighted", resolve_command_line([]).config)
    halved = shaping.Levers(jnp.full((len(NAMES),), 0.5, jnp.float32), None)
    start = SCENARIOS["data siphon"][0]
    start = {**start, "player": {**start["player"], "dataSiphons": 1}}
    state = _batch([jax_env.state_from_json(start)] * 3)
    actions = jnp.asarray([SIPHON_ACTION, 1, WAIT], jnp.int32)
    new, reward, done, info = STEP(state, actions)
    no_undo = jnp.zeros(3, bool)
    config = SearchConfig(tree_reward=tree)
    tree_step = jax.jit(lambda *args: _tree_reward(tree, config, *args)[0])
    got = tree_step(state, new, actions, reward, info, no_undo, {}, halved)
    components = jnp.stack([info["reward_components"][n] for n in NAMES], -1)
    facts = shaping.StepFacts(actions, reward, components, done, info)
    unweighted, _, _ = shaping.shape(tree.shapers, facts, {}, shaping.Levers(None, None))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(unweighted))
    halved_sum, _, _ = shaping.shape(tree.shapers, facts, {}, halved)
    assert not np.array_equal(np.asarray(halved_sum), np.asarray(unweighted))
