"""The search benchmark (python/scripts/bench_search.py) plays through the public search.

Only traced here (jax.eval_shape: no compile): a change of the search's signature that
the benchmark missed fails at once, without the minutes a compiled search costs.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from script_loading import load_script

from hackmatrix import jax_env
from hackmatrix.purejaxrl.network import make_network
from hackmatrix.search.search import SearchConfig

bench = load_script("bench_search")


def test_a_measured_call_traces_to_one_action_per_game_and_move():
    games, moves = 3, 2
    network = make_network(8, 1)
    obs = jnp.zeros((1, jax_env.env.OBS_SIZE))
    params = jax.eval_shape(network.init, jax.random.PRNGKey(0), obs)  # shapes only
    keys = jax.random.split(jax.random.PRNGKey(1), games)
    _, states = jax.eval_shape(jax.vmap(jax_env.reset), keys)
    play = bench.make_play(network, SearchConfig(num_simulations=2), games, moves)
    _, (done, action) = jax.eval_shape(play, jax.random.PRNGKey(2), states, params)
    assert done.shape == action.shape == (moves, games)
    assert action.dtype == jnp.int32


def test_a_tree_of_several_worlds_traces_too():
    games, moves = 2, 1
    network = make_network(8, 1)
    obs = jnp.zeros((1, jax_env.env.OBS_SIZE))
    params = jax.eval_shape(network.init, jax.random.PRNGKey(0), obs)
    keys = jax.random.split(jax.random.PRNGKey(1), games)
    _, states = jax.eval_shape(jax.vmap(jax_env.reset), keys)
    config = SearchConfig(num_simulations=2, worlds=3)
    play = bench.make_play(network, config, games, moves)
    _, (done, action) = jax.eval_shape(play, jax.random.PRNGKey(2), states, params)
    assert action.shape == (moves, games)
    assert bench.parse_args(["--worlds", "3"]).worlds == 3


def test_bad_sizes_are_refused(capsys):
    with pytest.raises(SystemExit):
        bench.parse_args(["--simulations", "0"])
    assert "must be at least 1" in capsys.readouterr().err
