"""Searched games are ordinary games (specs/search.md §6).

The search plugs into the one loop every analysis tool plays through
(`analysis.play.play`, as `hackmatrix-evaluate --search N` uses it) as a
chooser. A few searched games of a tiny network (one compile: the loop with
the search inside, recording the steps) must pick only legal actions, and
replay step for step on the Swift reference engine from their seeds: the
actions are the actions, so the states agree after every step.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from hackmatrix import jax_env
from hackmatrix.analysis.play import TRAJECTORY, GameKeys, play
from hackmatrix.purejaxrl.network import OBS_SIZE, make_network
from hackmatrix.search.search import SearchChooser, SearchConfig

GAMES, CAP = 3, 24
CONFIG = SearchConfig(num_simulations=2, max_num_considered_actions=4)


@pytest.fixture(scope="module")
def searched_games():
    network = make_network(16, 1)
    shapes = jax.eval_shape(network.init, jax.random.PRNGKey(0), jnp.zeros((1, OBS_SIZE)))
    rng = np.random.default_rng(3)
    params = jax.tree_util.tree_map(
        lambda s: (0.2 * rng.standard_normal(s.shape)).astype(np.float32), shapes
    )
    indices = jnp.arange(5, 5 + GAMES, dtype=jnp.int32)
    played = play(
        SearchChooser(network=network, config=CONFIG, params=params),
        GameKeys.of(jax.random.PRNGKey(1), indices),
        jax.vmap(jax.random.PRNGKey)(indices),
        jnp.int32(CAP),
        jax_env.EnvParams(),
        env=jax_env,
        watcher=TRAJECTORY,
        record_steps=CAP,
    )
    return jax.device_get(played)


def _game(played, g):
    """(seed, [(action, the state after it as JSON)]) of game g's live steps."""
    trace = played["trace"]
    steps = []
    for t in range(CAP):
        if not trace["live"][t][g]:
            break
        state = jax.tree_util.tree_map(lambda x, t=t: x[t][g], trace["state"])
        steps.append((int(trace["action"][t][g]), jax_env.state_to_json(state)))
    return int(played["counts"]["start_state"].seed[g]), steps


def test_searched_games_take_only_legal_actions(searched_games):
    trace = searched_games["trace"]
    start_masks = searched_games["counts"]["start_mask"]
    for g in range(GAMES):
        masks = [start_masks[g]] + [trace["mask"][t][g] for t in range(CAP - 1)]
        for t in range(CAP):
            if trace["live"][t][g]:
                assert masks[t][trace["action"][t][g]], (g, t)
    assert int(np.sum(searched_games["counts"]["length"])) > GAMES  # they did play


@pytest.mark.swift
def test_searched_games_replay_on_the_swift_engine(searched_games, swift_binary):
    from hackmatrix.swift_bridge.client import SwiftEngine

    replayed = 0
    with SwiftEngine(swift_binary) as engine:
        for g in range(GAMES):
            seed, steps = _game(searched_games, g)
            engine.reset(seed=seed)
            for t, (action, jax_state) in enumerate(steps):
                engine.step(action)  # raises if Swift rejects it
                assert engine.get_state() == jax_state, (g, t)
            replayed += len(steps)
    assert replayed >= 2 * GAMES
