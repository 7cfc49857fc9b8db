"""Quick returns of a policy over auto-reset games, logged under `eval/*` (training.md §2.8).

Runs `num_envs` games for `num_steps` steps with auto-reset (an ended game is replaced
by a new one, as in training) and reports completed episodes only: mean return, mean
length, and the stage-1 exit rate (share of finished episodes that ended on stage 2 or
later). Played by `play.play` with one key split at every step (`play.KeyStream`); the
learning test compares a trained policy with the uniform one this way.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp

from .choosers import chooser
from .play import KeyStream, Step, play

POLICIES = ("sample", "greedy", "random")


@dataclass(frozen=True)
class EpisodeSums:
    """Each game's running return and length (back to zero when it ends); a step's record
    is what the episodes ending on it add: [episodes, their returns, their lengths, those
    past stage 1] (f32[4], summed over the batch)."""

    def start(self, env: ModuleType, env_params: Any, obs: jax.Array, state: Any) -> dict:
        zeros = jnp.zeros(obs.shape[0])
        return {"return": zeros, "length": zeros}

    def add(self, env: ModuleType, counts: dict, step: Step) -> tuple[dict, jax.Array]:
        done = step.done
        ret, length = counts["return"] + step.reward, counts["length"] + 1
        sums = jnp.stack(
            [
                done.sum(),
                jnp.where(done, ret, 0).sum(),
                jnp.where(done, length, 0).sum(),
                (done & (step.info["stage"] >= 2)).sum(),
            ]
        ).astype(jnp.float32)
        return {"return": jnp.where(done, 0.0, ret), "length": jnp.where(done, 0.0, length)}, sums


EPISODE_SUMS = EpisodeSums()


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
    key, reset_key = jax.random.split(key)
    played = play(
        chooser(policy, network, params),
        KeyStream(key),
        jax.random.split(reset_key, num_envs),
        jnp.int32(num_steps),
        env.EnvParams(),
        env=env,
        watcher=EPISODE_SUMS,
        record_steps=num_steps,
        auto_reset=True,
    )
    episodes, ret, length, exits = (float(x) for x in jnp.sum(played["trace"], 0))
    per = max(episodes, 1.0)
    return {
        "eval/num_episodes": episodes,
        "eval/mean_episode_return": ret / per,
        "eval/mean_episode_length": length / per,
        "eval/stage1_exit_rate": exits / per,
    }
