"""Policy evaluation rollouts, logged under `eval/*` (training.md §2.8).

Runs `num_envs` games for `num_steps` steps with auto-reset and reports
completed episodes only: mean return, mean length, and the stage-1 exit
rate (share of finished episodes that ended on stage 2 or later).
"""

from __future__ import annotations

from functools import partial
from types import ModuleType
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp

from . import distribution
from .autoreset import make_auto_reset

POLICIES = ("sample", "greedy", "random")


@partial(jax.jit, static_argnames=("env", "network", "num_envs", "num_steps", "policy"))
def _rollout_sums(key, params, *, env, network, num_envs, num_steps, policy):
    env_params = env.EnvParams()
    v_reset = jax.vmap(env.reset, in_axes=(0, None))
    v_step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    auto_reset = make_auto_reset(env, env_params, num_envs)
    key, reset_key = jax.random.split(key)
    obs, state = v_reset(jax.random.split(reset_key, num_envs), env_params)
    zeros = jnp.zeros(num_envs)

    def one_step(carry, _):
        obs, state, ret, length, key = carry
        key, act_key, step_key, reset_key = jax.random.split(key, 4)
        mask = jax.vmap(env.action_mask)(state)
        if policy == "random":
            logits = jnp.zeros(mask.shape)
        else:
            logits, _ = network.apply(params, obs)
        if policy == "greedy":
            action = distribution.greedy(logits, mask)
        else:
            action, _ = distribution.sample(act_key, logits, mask)
        next_obs, next_state, reward, done, info = v_step(
            jax.random.split(step_key, num_envs), state, action, env_params
        )
        ret, length = ret + reward, length + 1
        next_state, next_obs = auto_reset(reset_key, done, next_state, next_obs)
        sums = jnp.stack(
            [
                done.sum(),
                jnp.where(done, ret, 0).sum(),
                jnp.where(done, length, 0).sum(),
                (done & (info["stage"] >= 2)).sum(),
            ]
        ).astype(jnp.float32)
        carry = (next_obs, next_state, jnp.where(done, 0.0, ret), jnp.where(done, 0.0, length), key)
        return carry, sums

    _, sums = jax.lax.scan(one_step, (obs, state, zeros, zeros, key), None, num_steps)
    return sums.sum(0)


def evaluate(
    env: ModuleType,
    network: nn.Module,
    params: Any,
    key: jax.Array,
    *,
    num_envs: int = 64,
    num_steps: int = 256,
    policy: str = "sample",
) -> dict[str, float]:
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    episodes, ret, length, exits = (
        float(x)
        for x in _rollout_sums(
            key,
            params,
            env=env,
            network=network,
            num_envs=num_envs,
            num_steps=num_steps,
            policy=policy,
        )
    )
    per = max(episodes, 1.0)
    return {
        "eval/num_episodes": episodes,
        "eval/mean_episode_return": ret / per,
        "eval/mean_episode_length": length / per,
        "eval/stage1_exit_rate": exits / per,
    }
