"""Bit-identity guard for the batched step (issue 51).

A vmapped rollout (many envs, many steps, random actions from a fixed key,
finished envs auto-reset) is hashed: every step's actions, observations,
rewards, the 15 reward components, done and invalid flags, the action masks
after the step and every leaf of the state (stale history rows and freed list
slots included), and the observations after the reset. The hash was recorded
before the step was reshaped for accelerators; any change of the engine's
results, even in a value no rule reads, changes it. A second rollout starts
curriculum games (later stages, many programs, resources, pending siphon
transmissions), so every program runs many times.

On a difference: `pytest parity/` and the fuzzer say whether the game changed
(a divergence) or only unobservable values did (stale slots); record a new
hash only in the second case, and say why in the commit.
"""

import hashlib
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hackmatrix.jax_env as J
from hackmatrix.jax_env.machinery import form

ENVS = 64
CHUNK = 32  # steps per jitted call: one compile, a bounded host buffer per call
CHUNKS = 8  # 256 steps per env, 16,384 env steps per rollout
# Action weights as the parity fuzzer's: 1 per direction, 3 for the siphon, 4 per program.
WEIGHTS = np.array([1] * 4 + [3] + [4] * 23, np.int32)
INVALID_EVERY = 16  # about one action in 16 is drawn from all 28, mostly invalid ones

CURRICULUM = J.curriculum_params(
    prob=0.75,
    stage_weights=[1, 1, 1, 1, 1, 1, 1, 1],
    programs=(4, 23),
    credits=(0, 40),
    energy=(0, 40),
    data_siphons=(0, 4),
    transmissions=(0, 6),
)

# Recorded at dcd3f9c (before the step was reshaped), CPU, jax 0.10.2; equal with
# JAX_DISABLE_MOST_OPTIMIZATIONS=1 (test.sh's setting).
EXPECTED = {
    "canonical": "fdd3b7e4d9fed58603f9d2fd06ec15524f59591825a9dea1c171f2bbca7a3dc3",
    "curriculum": "12a7d65ece4d5563d83810fe860d58d182b3e147ed264de9323ded8a022e46be",
}


def _actions(key: jax.Array, masks: jax.Array) -> jax.Array:
    """A weighted random valid action per env (integer draws only), sometimes any action."""
    k_pick, k_any, k_which = jax.random.split(key, 3)
    cum = jnp.cumsum(jnp.where(masks, jnp.asarray(WEIGHTS), 0), axis=-1)
    r = jax.random.randint(k_pick, cum.shape[:1], 0, jnp.maximum(cum[:, -1], 1))
    valid = jnp.argmax(cum > r[:, None], axis=-1).astype(jnp.int32)
    anything = jax.random.randint(k_any, valid.shape, 0, J.HackMatrixEnv.num_actions)
    use_any = jax.random.randint(k_which, valid.shape, 0, INVALID_EVERY) == 0
    return jnp.where(use_any, anything, valid).astype(jnp.int32)


_v_step = jax.vmap(J.step, in_axes=(None, 0, 0))
_v_mask = jax.vmap(J.action_mask)


@partial(jax.jit, static_argnames="step_form")
def _reset(key: jax.Array, params: J.EnvParams, step_form: str) -> tuple[jax.Array, J.EnvState]:
    with form.using(step_form):
        return jax.vmap(J.reset, in_axes=(0, None))(jax.random.split(key, ENVS), params)


@partial(jax.jit, static_argnames="step_form")
def _chunk(carry: tuple, params: J.EnvParams, step_form: str) -> tuple:
    with form.using(step_form):
        return _scan(carry, params)


def _scan(carry: tuple, params: J.EnvParams) -> tuple:
    def one(carry: tuple, _: None) -> tuple:
        obs, states, key = carry
        key, k_act, k_reset = jax.random.split(key, 3)
        actions = _actions(k_act, _v_mask(states))
        obs, states, reward, done, info = _v_step(None, states, actions)
        out = (actions, obs, reward, done, info, _v_mask(states), states)
        obs, states = J.reset_where(k_reset, done, obs, states, params)
        return (obs, states, key), (out, obs)

    return jax.lax.scan(one, carry, None, length=CHUNK)


def _update(h: "hashlib._Hash", tree: object) -> None:
    for leaf in jax.tree_util.tree_leaves(tree):
        a = np.asarray(leaf)
        h.update(str((a.dtype, a.shape)).encode())
        h.update(np.ascontiguousarray(a).tobytes())


def fingerprint(params: J.EnvParams, seed: int, step_form: str) -> str:
    """sha256 of a CHUNKS x CHUNK-step rollout of ENVS envs (see the module docstring)."""
    h = hashlib.sha256()
    key = jax.random.PRNGKey(seed)
    obs, states = _reset(key, params, step_form)
    _update(h, (obs, states))
    carry = (obs, states, jax.random.fold_in(key, 1))
    for _ in range(CHUNKS):
        carry, outs = _chunk(carry, params, step_form)
        _update(h, outs)
    return h.hexdigest()


# Both forms of the step (machinery/form.py) must give the recorded results: the gathered
# form a CPU runs, the masked form an accelerator runs (here compiled for the CPU).
@pytest.mark.parametrize("step_form", form.FORMS)
def test_canonical_rollout_is_unchanged(step_form):
    assert fingerprint(J.EnvParams(), 51, step_form) == EXPECTED["canonical"]


@pytest.mark.parametrize("step_form", form.FORMS)
def test_curriculum_rollout_is_unchanged(step_form):
    assert fingerprint(CURRICULUM, 52, step_form) == EXPECTED["curriculum"]
