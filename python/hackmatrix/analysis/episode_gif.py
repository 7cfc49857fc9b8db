"""A GIF of the current policy playing one episode, written at each checkpoint.

At every save the trainer plays one game with the current parameters and
writes `episode_{update}.gif` into the run directory (and logs it to W&B as
`episode/gif` when a run is active), so progress can be watched without a
viewer.

Choices:
- The policy acts greedily (argmax of the masked logits) from one fixed
  starting position per run (`reset` with `PRNGKey(seed)`), so GIFs from
  successive checkpoints show the same game and differ only by the policy.
- The episode is played by `play.play` (the loop every analysis tool plays
  through) as a batch of one game with its trajectory recorded
  (`play.Trajectory`): every state, action, reward, component vector and mask
  of up to `max_steps` steps. Its start is that of the behaviour evaluation's
  game number `seed` (`games.py`). `play` is compiled once per (env, network,
  max_steps) and reused.
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
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from .choosers import Greedy
from .play import TRAJECTORY, GameKeys, play

if TYPE_CHECKING:  # the logger is passed in; importing it here is for the hint only
    from ..purejaxrl.metrics import MetricsLogger

DEFAULT_MAX_STEPS = 200
DEFAULT_FPS = 4.0
# Half-size frames: still readable, about 6 kB a frame (a 200-step game is near 1.2 MB).
DEFAULT_SCALE = 0.5
WANDB_KEY = "episode/gif"


def play_episode(
    key: jax.Array, params: Any, *, env: ModuleType, network: nn.Module, max_steps: int
) -> dict[str, np.ndarray]:
    """Play one greedy episode of at most `max_steps` steps from `env.reset(key)`.

    Returns a dict of host arrays with a leading time axis: `states` (max_steps + 1
    states, the first being the start), `actions`, `rewards`, `components` (max_steps x
    15, in `env.REWARD_COMPONENT_NAMES` order), `masks` (max_steps + 1: the mask in force
    at each state), `done`, `length` (the number of real steps) and `start_obs` (the
    first observation). Entries past `length` are not part of the game.
    """
    played = jax.device_get(
        play(
            Greedy(network=network, params=params),
            GameKeys(key[None]),
            key[None],
            jnp.int32(max_steps),
            env.EnvParams(),
            env=env,
            watcher=TRAJECTORY,
            record_steps=max_steps,
        )
    )
    start, trace = played["counts"], played["trace"]

    def with_start(first, rest):  # game 0 of the batch of one, its start first
        return np.concatenate([first[:1], rest[:, 0]])

    return {
        "states": jax.tree_util.tree_map(with_start, start["start_state"], trace["state"]),
        "actions": trace["action"][:, 0],
        "rewards": trace["reward"][:, 0],
        "components": trace["components"][:, 0],
        "done": trace["done"][:, 0],
        "masks": with_start(start["start_mask"], trace["mask"]),
        "start_obs": start["start_obs"][0],
        "length": start["length"][0],
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
