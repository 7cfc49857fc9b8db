"""The JAX engine benchmark's random policy and rollout (python/scripts/bench_jax_env.py)."""

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from script_loading import load_script

bench = load_script("bench_jax_env")


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


def test_devices_for_splits_only_evenly():
    devices = ["d0", "d1", "d2", "d3"]
    assert bench.devices_for(1, devices) == ["d0"]
    assert bench.devices_for(6, devices) == ["d0", "d1"]
    assert bench.devices_for(4096, devices) == devices


# Two CPU devices need a fresh process: XLA reads its device count once, at start-up. The
# same process checks the one-device rollout's observations, so the suite compiles the
# rollout once less.
TWO_DEVICES = """
from hackmatrix.host_devices import request_cpu_devices
assert request_cpu_devices(2)
import jax, numpy as np
from script_loading import load_script
bench = load_script("bench_jax_env")
import hackmatrix.jax_env as J
assert len(jax.local_devices()) == 2
obs, states = jax.vmap(J.reset)(jax.random.split(jax.random.PRNGKey(2), 4))
keys = jax.random.split(jax.random.PRNGKey(3), 2)
rollout, sharding = bench.make_sharded_rollout(4, 3, jax.local_devices())
out = rollout(*jax.device_put((keys, obs, states), sharding))
# Each device must run exactly the single-device rollout on its half, with its own key.
local = bench.make_rollout(2, 3)
halves = [local(keys[i], *jax.tree_util.tree_map(lambda x: x[2 * i:2 * i + 2], (obs, states)))
          for i in range(2)]
np.testing.assert_array_equal(
    np.asarray(out[0]), np.concatenate([np.asarray(h[0]) for h in halves]))
for a, b0, b1 in zip(jax.tree_util.tree_leaves(out[1]), jax.tree_util.tree_leaves(halves[0][1]),
                     jax.tree_util.tree_leaves(halves[1][1])):
    np.testing.assert_array_equal(np.asarray(a), np.concatenate([np.asarray(b0), np.asarray(b1)]))
assert int(out[3].sum()) == int(halves[0][3]) + int(halves[1][3])
# The rollout returns the observations of the states it returns (after auto-resets too).
observe = jax.jit(jax.vmap(lambda s: J.flatten_observation(J.observe(s))))
for h_obs, h_states, _, _ in halves:
    assert h_obs.shape == (2, 1545)
    np.testing.assert_array_equal(np.asarray(h_obs), np.asarray(observe(h_states)))
print("ok")
"""


# Two compiles of the real game's rollout in a fresh process (~80 s of the suite) for a
# benchmark's multi-device path; the trainer's own multi-device run stays in CI
# (tests/purejaxrl/test_runs.py, test_four_devices_match_one_device).
@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("HACKMATRIX_SLOW"), reason="set HACKMATRIX_SLOW=1 for the sharded bench"
)
def test_sharded_rollout_is_the_single_device_rollout_per_shard_and_observes_its_states():
    from script_loading import REPO

    paths = [str(REPO / "python"), str(REPO / "tests")]  # the package, and script_loading
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=os.pathsep.join(paths))
    env.pop("XLA_FLAGS", None)
    out = subprocess.run(
        [sys.executable, "-c", TWO_DEVICES],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]
