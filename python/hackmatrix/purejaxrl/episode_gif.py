"""A GIF of the current policy playing one episode, written at each checkpoint.

At every save the trainer plays one game with the current parameters and
writes `episode_{update}.gif` into the run directory (and logs it to W&B as
`episode/gif` when a run is active), so progress can be watched without a
viewer.

Choices:
- The policy acts greedily (argmax of the masked logits) from one fixed
  starting position per run (`reset` with `PRNGKey(seed)`), so GIFs from
  successive checkpoints show the same game and differ only by the policy.
- The episode is played by one jitted `lax.scan` over `max_steps` steps that
  returns every state, action, reward, component vector and mask; after the
  game ends the state is frozen and the extra steps are dropped on the host.
  The function is jitted once per (env, network, max_steps) and reused.
- Frames: one for the starting position, then one per step showing the new
  state with the action taken, its reward components and the next mask, so
  an episode of length n gives n + 1 frames. The title carries the step
  number, which keeps consecutive frames distinct (the GIF writer would
  otherwise merge identical frames).

The renderer (Pillow) and wandb are imported only when a GIF is made; any
failure, a missing Pillow included, becomes a one-line warning and training
goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from . import distribution

if TYPE_CHECKING:  # the logger is passed in; importing it here is for the hint only
    from .metrics import MetricsLogger

DEFAULT_MAX_STEPS = 200
DEFAULT_FPS = 4.0
# Half-size frames: still readable, about 6 kB a frame (a 200-step game is near 1.2 MB).
DEFAULT_SCALE = 0.5
WANDB_KEY = "episode/gif"


@partial(jax.jit, static_argnames=("env", "network", "max_steps"))
def play_episode(
    key: jax.Array, params: Any, *, env: ModuleType, network: nn.Module, max_steps: int
) -> dict[str, jax.Array]:
    """Play one greedy episode of at most `max_steps` steps on a single env.

    Returns a dict of arrays with a leading time axis: `states` (max_steps + 1
    states, the first being the start), `actions`, `rewards`, `components`
    (max_steps x 15, in `env.REWARD_COMPONENT_NAMES` order), `masks`
    (max_steps + 1: the mask in force at each state), `done`, `length`
    (the number of real steps) and `start_obs` (the first observation).
    """
    env_params = env.EnvParams()
    obs, state = env.reset(key, env_params)
    names = env.REWARD_COMPONENT_NAMES

    def one_step(carry, _):
        obs, state, finished = carry
        mask = env.action_mask(state)
        logits, _ = network.apply(params, obs[None])
        action = distribution.greedy(logits[0], mask)
        next_obs, next_state, reward, done, info = env.step(key, state, action, env_params)
        components = jnp.stack([info["reward_components"][n] for n in names])
        # Once the game is over, keep the final state (the extra steps are dropped later).
        keep = lambda old, new: jnp.where(finished, old, new)  # noqa: E731
        next_state = jax.tree_util.tree_map(keep, state, next_state)
        next_obs = keep(obs, next_obs)
        out = {
            "state": next_state,
            "action": action,
            "reward": reward,
            "components": components,
            "done": done & ~finished,
            "mask": env.action_mask(next_state),
            "finished": finished,
        }
        return (next_obs, next_state, finished | done), out

    _, trace = jax.lax.scan(one_step, (obs, state, jnp.bool_(False)), None, max_steps)
    live = ~trace["finished"]
    prepend = lambda first, rest: jnp.concatenate([first[None], rest])  # noqa: E731
    return {
        "states": jax.tree_util.tree_map(prepend, state, trace["state"]),
        "actions": trace["action"],
        "rewards": trace["reward"],
        "components": trace["components"],
        "done": trace["done"],
        "masks": jnp.concatenate([env.action_mask(state)[None], trace["mask"]]),
        "start_obs": obs,
        "length": live.sum(),
    }


def _frame(states, t: int):
    """The state at step `t` of an episode's stacked states."""
    return jax.tree_util.tree_map(lambda leaf: leaf[t], states)


class EpisodeGif:
    """Plays and renders one episode per checkpoint; never raises."""

    def __init__(
        self,
        env: ModuleType,
        network: nn.Module,
        run_dir: Path,
        *,
        seed: int = 0,
        max_steps: int = DEFAULT_MAX_STEPS,
        fps: float = DEFAULT_FPS,
        scale: float = DEFAULT_SCALE,
        say: Callable[..., Any] = print,
    ):
        self.env = env
        self.network = network
        self.run_dir = Path(run_dir)
        self.key = jax.random.PRNGKey(seed)
        self.max_steps = max_steps
        self.fps = fps
        self.scale = scale
        self.say = say
        self.disabled_reason: str | None = None
        if not hasattr(env, "state_to_json"):
            self._disable(f"the game module {getattr(env, '__name__', env)!s} has no state_to_json")

    def record(self, update: int, params: Any, logger: MetricsLogger | None = None) -> Path | None:
        """Write `episode_{update}.gif`, log it to W&B if a run is active; return the path."""
        if self.disabled_reason is not None:
            return None
        try:
            from hackmatrix.render import recording, render_rgb
        except ImportError as error:
            self._disable(f"the renderer is unavailable ({error})")
            return None
        try:
            # Host params: one compiled version whatever the trainer's device layout.
            params = jax.device_get(params)
            episode = jax.device_get(
                play_episode(
                    self.key, params, env=self.env, network=self.network, max_steps=self.max_steps
                )
            )
            frames = self.render_frames(episode, render_rgb)
            path = recording.save_gif(frames, self.run_dir / f"episode_{update}.gif", fps=self.fps)
        except Exception as error:
            self.say(
                f"WARNING: episode GIF for update {update} failed ({type(error).__name__}: {error})"
            )
            return None
        self._log_to_wandb(update, path, int(episode["length"]), logger)
        return path

    def render_frames(
        self, episode: dict, render_rgb: Callable[..., np.ndarray]
    ) -> list[np.ndarray]:
        names = self.env.REWARD_COMPONENT_NAMES
        length = int(episode["length"])
        frames = []
        for t in range(length + 1):
            state = self.env.state_to_json(_frame(episode["states"], t))
            step_info = {}
            if t > 0:
                step_info = dict(
                    last_action=int(episode["actions"][t - 1]),
                    reward=float(episode["rewards"][t - 1]),
                    reward_components={
                        n: float(v) for n, v in zip(names, episode["components"][t - 1])
                    },
                )
            title = (
                f"step {t}/{length}  ·  stage {state.get('stage', '?')}"
                f"  ·  turn {state.get('turn', '?')}"
            )
            frames.append(
                render_rgb(
                    state,
                    mask=[bool(m) for m in episode["masks"][t]],
                    scale=self.scale,
                    title=title,
                    **step_info,
                )
            )
        return frames

    def _log_to_wandb(self, update: int, path: Path, length: int, logger) -> None:
        run = getattr(logger, "run", None)
        if run is None or update <= getattr(logger, "skip_through", -1):
            return
        try:
            import wandb

            run.log(
                {
                    WANDB_KEY: wandb.Video(
                        str(path), format="gif", caption=f"update {update}: {length} steps"
                    )
                },
                step=update,
            )
        except Exception as error:
            self.say(
                f"WARNING: logging {path.name} to W&B failed ({type(error).__name__}: {error})"
            )

    def _disable(self, reason: str) -> None:
        self.disabled_reason = reason
        self.say(f"WARNING: episode GIFs off: {reason}")
