"""The JAX engine benchmark's random policy and rollout (python/scripts/bench_jax_env.py)."""

import importlib.util
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import hackmatrix.jax_env as J

_PATH = Path(__file__).resolve().parents[2] / "python" / "scripts" / "bench_jax_env.py"
_SPEC = importlib.util.spec_from_file_location("bench_jax_env", _PATH)
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)


def test_random_valid_actions_are_valid_and_uniform():
    masks = np.zeros((30000, 28), bool)
    masks[:, [0, 5, 27]] = True
    masks[0] = False  # nothing valid: action 0
    masks[1] = np.eye(28, dtype=bool)[13]
    actions = np.asarray(bench.random_valid_actions(jax.random.PRNGKey(0), jnp.asarray(masks)))
    assert actions[0] == 0 and actions[1] == 13
    values, counts = np.unique(actions[2:], return_counts=True)
    assert values.tolist() == [0, 5, 27]
    assert np.all(np.abs(counts / counts.sum() - 1 / 3) < 0.02)


def test_rollout_returns_the_observations_of_the_states_it_returns():
    obs, states = jax.vmap(J.reset)(jax.random.split(jax.random.PRNGKey(4), 3))
    obs, states, _, finished = bench.make_rollout(3, 5)(jax.random.PRNGKey(5), obs, states)
    assert obs.shape == (3, 1545) and int(finished) >= 0
    expected = jax.vmap(lambda s: J.flatten_observation(J.observe(s)))(states)
    np.testing.assert_array_equal(np.asarray(obs), np.asarray(expected))
