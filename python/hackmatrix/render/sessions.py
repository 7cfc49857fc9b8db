"""One game on either engine, behind one small interface for the viewers.

`SwiftSession` drives the Swift CLI (`hackmatrix.swift_bridge.client.SwiftEngine`);
`JaxSession` drives the JAX engine (`hackmatrix.jax_env`). Both give the
state as a `getState`-schema dict (what the renderers draw), the action mask,
the flat 1545-float observation (what a policy reads), and a step result with
the 15 reward components. An action the engine rejects raises
`InvalidActionError` and changes nothing.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hackmatrix.names import ACTION_COUNT, REWARD_COMPONENT_NAMES, action_name

from ..jax_cache import enable_compilation_cache

ENGINES = ("swift", "jax")


class InvalidActionError(ValueError):
    """The engine refused the action (masked, out of range, or the game is over)."""


@dataclass
class StepOutcome:
    action: int
    reward: float
    components: dict[str, float]
    done: bool
    won: bool = False
    died: bool = False
    stage_complete: bool = False
    info: dict = field(default_factory=dict)


def random_seed() -> int:
    """A uint32 seed from OS entropy (choosing a seed is not a game decision)."""
    return secrets.randbits(32)


def _check_seed(seed: int | None) -> int:
    if seed is None:
        return random_seed()
    seed = int(seed)
    if not 0 <= seed <= 0xFFFFFFFF:
        raise ValueError(f"seed must be in 0..4294967295, got {seed}")
    return seed


class SwiftSession:
    name = "swift"

    def __init__(self, binary: str | Path | None = None, *, log_level: str | None = None) -> None:
        from hackmatrix.swift_bridge.client import SwiftEngine

        self._engine = SwiftEngine(binary, log_level=log_level)
        self._observation: dict | None = None
        self._mask = [False] * ACTION_COUNT
        self.seed: int | None = None

    def reset(self, seed: int | None = None) -> int:
        response = self._engine.reset(_check_seed(seed))
        self._observation = response["observation"]
        self._mask = [bool(v) for v in response["info"]["action_mask"]]
        self.seed = int(response["seed"])
        return self.seed

    def state(self) -> dict:
        return self._engine.get_state()

    def mask(self) -> list[bool]:
        return list(self._mask)

    def observation(self) -> np.ndarray:
        from hackmatrix.swift_bridge.observation import encode_flat

        if self._observation is None:
            raise RuntimeError("no game: call reset first")
        return encode_flat(self._observation)

    def step(self, action: int) -> StepOutcome:
        from hackmatrix.swift_bridge.client import CliError

        try:
            response = self._engine.step(int(action))
        except CliError as error:
            if error.code in (
                "action_masked",
                "action_out_of_range",
                "episode_over",
                "invalid_request",
            ):
                raise InvalidActionError(f"{error.code}: {error}") from error
            raise
        info = response.get("info", {})
        self._observation = response["observation"]
        self._mask = [bool(v) for v in info.get("action_mask", [False] * ACTION_COUNT)]
        components = {
            name: float(info.get("reward_components", {}).get(name, 0.0))
            for name in REWARD_COMPONENT_NAMES
        }
        return StepOutcome(
            action=int(action),
            reward=float(response["reward"]),
            components=components,
            done=bool(response["done"]),
            won=bool(info.get("game_won", False)),
            died=bool(info.get("death", False)),
            stage_complete=bool(info.get("stage_complete", False)),
            info=info,
        )

    def close(self) -> None:
        self._engine.close()


class JaxSession:
    name = "jax"

    def __init__(self) -> None:
        import jax

        from hackmatrix import jax_env

        enable_compilation_cache()  # the step takes about a minute to compile on a small CPU

        self._jax = jax
        self._env = jax_env
        self._params = jax_env.EnvParams()
        self._reset_fn = jax.jit(jax_env.reset_from_seed)
        self._step_fn = jax.jit(jax_env.step)
        self._mask_fn = jax.jit(jax_env.action_mask)
        # The rules draw from the seed in the state, not from this key.
        self._key = jax.random.PRNGKey(0)
        self._state: Any = None
        self._obs: Any = None
        self._mask = [False] * ACTION_COUNT
        self.seed: int | None = None

    def reset(self, seed: int | None = None) -> int:
        seed = _check_seed(seed)
        obs, state = self._reset_fn(np.uint32(seed), self._params)
        self._obs, self._state = obs, state
        self._mask = [bool(v) for v in np.asarray(self._mask_fn(state))]
        self.seed = seed
        return seed

    def warm_up(self) -> None:
        """Compile the step function now (on a throw-away copy) instead of on the first move."""
        self._require_game()
        valid = [a for a, ok in enumerate(self._mask) if ok]
        if valid:
            self._jax.block_until_ready(
                self._step_fn(self._key, self._state, np.int32(valid[0]), self._params)
            )

    def state(self) -> dict:
        self._require_game()
        return self._env.state_to_json(self._state)

    def mask(self) -> list[bool]:
        return list(self._mask)

    def observation(self) -> np.ndarray:
        self._require_game()
        return np.asarray(self._obs, dtype=np.float32)

    def step(self, action: int) -> StepOutcome:
        self._require_game()
        action = int(action)
        if not 0 <= action < ACTION_COUNT:
            raise InvalidActionError(
                f"action_out_of_range: action {action} is outside 0..{ACTION_COUNT - 1}"
            )
        obs, state, reward, done, info = self._step_fn(
            self._key, self._state, np.int32(action), self._params
        )
        if bool(info["invalid_action"]):  # the engine's own check, as Swift's action_masked
            raise InvalidActionError(
                f"invalid_action: the JAX engine rejected action {action} ({action_name(action)})"
            )
        self._obs, self._state = obs, state
        done = bool(done)
        self._mask = (
            [False] * ACTION_COUNT if done else [bool(v) for v in np.asarray(self._mask_fn(state))]
        )
        components = {
            name: float(info["reward_components"][name]) for name in REWARD_COMPONENT_NAMES
        }
        won = bool(info.get("won", False))
        return StepOutcome(
            action=action,
            reward=float(reward),
            components=components,
            done=done,
            won=won,
            died=bool(info.get("died", False)),
            stage_complete=components["stage_completion"] != 0.0,
            info={k: np.asarray(v).tolist() for k, v in info.items() if k != "reward_components"},
        )

    def close(self) -> None:
        self._state = None

    def _require_game(self) -> None:
        if self._state is None:
            raise RuntimeError("no game: call reset first")


def open_session(
    engine: str, *, binary: str | Path | None = None, log_level: str | None = None
) -> SwiftSession | JaxSession:
    """A session on the named engine ("swift" or "jax")."""
    if engine == "swift":
        return SwiftSession(binary, log_level=log_level)
    if engine == "jax":
        return JaxSession()
    raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
