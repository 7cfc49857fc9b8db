"""Gymnasium env ``HackMatrix-v0`` over the Swift CLI (``training.md`` §6.3).

One Swift process per env and one JSON round trip per step: the next action
mask arrives in the step response (``info.action_mask``) and is cached for
:meth:`HackMatrixEnv.action_masks` (the sb3-contrib MaskablePPO hook).

Spaces (``observation.md`` §7): ``Discrete(28)`` and a ``Dict`` of
``player`` f32[10], ``programs`` i32[23], ``grid`` f32[6,6,42]; with
``flat_observation=True`` the flat f32[1545] vector of ``observation.md`` §8.

A masked or out-of-range action changes nothing: it returns the unchanged
observation, reward 0, ``terminated = truncated = False`` and
``info["invalid_action"] = True``, as the JAX env does. The env never
truncates by itself; wrap it in ``TimeLimit`` (or pass ``max_episode_steps``
to ``gymnasium.make``).

A dead engine (``training.md`` §6.3): the step that finds the Swift process
gone raises :class:`EngineCrashed` (a hang: :class:`EngineTimeout`), and so
does every later step until ``reset()``, which starts a fresh engine, warns
(:class:`EngineRestartWarning`) and counts it in ``info["engine_restarts"]``.
Vector envs shut a worker down on any exception, so inside them wrap the env
in :class:`TruncateOnEngineCrash`: the crash then ends the episode as
truncated and the vector env's auto-reset brings up the new engine.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hackmatrix.names import (
    ACTION_COUNT,
    CELL_FEATURES,
    FIRST_PROGRAM_ACTION,
    GRID_SIZE,
    OBS_SIZE,
    PLAYER_FEATURES,
    PROGRAM_FEATURES,
    PROGRAM_NAMES,
    REWARD_COMPONENT_NAMES,
)
from hackmatrix.swift_bridge.client import DEFAULT_TIMEOUT_S, CliError, EngineError, SwiftEngine
from hackmatrix.swift_bridge.observation import encode_observation, flatten_observation

# What reset/step return: the flat f32[1545], or the dict of player / programs / grid.
Observation = np.ndarray | dict[str, np.ndarray]
StepReturn = tuple[Observation, float, bool, bool, dict[str, Any]]

SUPPORTED_PROTOCOL_MAJOR = "2"
REJECTED_ACTION_CODES = frozenset({"action_masked", "action_out_of_range"})
_UINT32_RANGE = 1 << 32


class EngineRestartWarning(RuntimeWarning):
    """reset() replaced a dead Swift engine with a fresh one."""


def _render_rgb(state: dict, **kwargs) -> np.ndarray:
    """The visual renderer, imported only for an ``rgb_array`` frame (it needs Pillow)."""
    from hackmatrix.render import render_rgb

    return render_rgb(state, **kwargs)


class HackMatrixEnv(gym.Env):
    """The HackMatrix game, played by the Swift reference engine."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        flat_observation: bool = False,
        binary: str | None = None,
        log_level: str | None = None,
        stderr_log: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT_S,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}"
            )
        if render_mode == "rgb_array":
            try:
                import hackmatrix.render  # noqa: F401  (fail now, not at the first frame)
            except ImportError as error:
                raise ImportError(
                    f"render_mode 'rgb_array' needs the viz extra (Pillow): {error}"
                ) from error
        self.render_mode = render_mode
        self.flat_observation = flat_observation
        self.action_space = spaces.Discrete(ACTION_COUNT)
        if flat_observation:
            self.observation_space = spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
        else:
            self.observation_space = spaces.Dict(
                {
                    "player": spaces.Box(0.0, 1.0, (PLAYER_FEATURES,), np.float32),
                    "programs": spaces.Box(0, 1, (PROGRAM_FEATURES,), np.int32),
                    "grid": spaces.Box(0.0, 1.0, (GRID_SIZE, GRID_SIZE, CELL_FEATURES), np.float32),
                }
            )
        self._engine_options: dict[str, Any] = {
            "timeout": timeout,
            "log_level": log_level,
            "stderr_log": stderr_log,
        }
        self._engine, self.engine_info = self._start_engine(binary)
        self.engine_restarts = 0  # fresh engines started by reset() after a crash
        self._engine_failure: EngineError | None = None  # set by a crash, cleared by reset()
        self._user_closed = False
        self._mask = np.zeros(ACTION_COUNT, dtype=bool)
        self._obs_json: dict | None = None
        self._obs: Any = None
        self._stats: _EpisodeStats | None = None
        self._last_step: dict = {}  # action, reward and components of the last step, for rgb frames

    def _start_engine(self, binary: str | Path | None) -> tuple[SwiftEngine, dict]:
        """Start a Swift process, greet it and check its protocol.

        Nothing is left running on failure.
        """
        engine = SwiftEngine(binary, **self._engine_options)
        try:
            hello = engine.hello()
            version = str(hello.get("protocolVersion", "?"))
            if (
                version.split(".")[0] != SUPPORTED_PROTOCOL_MAJOR
                or hello.get("actionCount") != ACTION_COUNT
            ):
                raise RuntimeError(
                    f"{engine.binary} speaks protocol {version} with "
                    f"{hello.get('actionCount')} actions; this env needs protocol "
                    f"{SUPPORTED_PROTOCOL_MAJOR}.x with {ACTION_COUNT} actions"
                )
        except BaseException:
            engine.close()
            raise
        return engine, hello

    def _restart_engine(self) -> None:
        """Replace the dead engine (its process is already reaped) with a fresh one."""
        dead = self._engine
        reason = str(self._engine_failure or "its process was closed").splitlines()[0]
        dead.close()
        self._engine, self.engine_info = self._start_engine(dead.binary)
        self.engine_restarts += 1
        self._engine_failure = None
        warnings.warn(
            f"HackMatrix-v0: the Swift engine (pid {dead.pid}) had died ({reason}); reset() "
            f"started a fresh one (pid {self._engine.pid}), restart {self.engine_restarts} "
            "of this env",
            EngineRestartWarning,
            stacklevel=3,
        )

    # ------------------------------------------------------------------ gym API

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode.

        A seed in 0..2**32-1 is passed to the engine as is (the same seed as
        in traces and ``play.py``); any other seed, or none, draws the engine
        seed from the env's ``np_random``, so unseeded episodes differ.
        ``options={"state": {...}}`` starts from a ``setState`` state instead.
        """
        super().reset(seed=seed)
        if self._user_closed:
            raise RuntimeError("reset() on a closed HackMatrix-v0 env; make a new one")
        if self._engine.closed:
            self._restart_engine()
        try:
            response, engine_seed = self._reset_engine(seed, options)
        except EngineError as error:  # the engine died since the last step: once more, on a new one
            self._engine_failure = error
            self._restart_engine()
            response, engine_seed = self._reset_engine(seed, options)
        self._accept_observation(response)
        self._stats = _EpisodeStats(response["observation"])
        self._last_step = {}
        info = {
            "action_mask": self._mask,
            "seed": engine_seed,
            "step_index": response["info"]["step_index"],
            "engine_restarts": self.engine_restarts,
        }
        return self._obs, info

    def _reset_engine(self, seed: int | None, options: dict | None) -> tuple[dict, int]:
        state = (options or {}).get("state")
        if state is not None:
            response = self._engine.set_state(state)
            engine_seed = int(state.get("seed", 0))
        else:
            if seed is not None and 0 <= seed < _UINT32_RANGE:
                engine_seed = int(seed)
            else:
                engine_seed = int(self.np_random.integers(0, _UINT32_RANGE, dtype=np.uint64))
            response = self._engine.reset(engine_seed)
            engine_seed = response.get("seed", engine_seed)
        return response, engine_seed

    def step(self, action: int | np.integer | np.ndarray) -> StepReturn:
        if self._obs_json is None or self._stats is None:
            raise RuntimeError("call reset() before step()")
        if self._engine_failure is not None:
            raise type(self._engine_failure)(
                f"the Swift engine died in an earlier step; call reset() to start a fresh one "
                f"(the failure: {str(self._engine_failure).splitlines()[0]})"
            )
        index = _action_index(action)
        try:
            response = self._engine.step(index)
        except EngineError as error:
            self._engine_failure = error
            raise
        except CliError as error:
            if error.code not in REJECTED_ACTION_CODES:
                raise
            info = {
                "invalid_action": True,
                "error": error.code,
                "action_mask": self._mask.copy(),
                "reward_components": dict.fromkeys(REWARD_COMPONENT_NAMES, 0.0),
            }
            return self._copy_obs(), 0.0, False, False, info
        self._accept_observation(response)
        info = response["info"]
        info["action_mask"] = self._mask
        info["invalid_action"] = False
        reward = float(response["reward"])
        terminated = bool(response["done"])
        self._stats.record(index, reward, info, self._obs_json)
        self._last_step = {
            "last_action": index,
            "reward": reward,
            "reward_components": info.get("reward_components"),
        }
        if terminated:
            info["episode_stats"] = self._stats.summary()
        return self._obs, reward, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """The mask of the current state (``True`` = allowed), cached from the last response."""
        return self._mask

    def render(self) -> str | np.ndarray | None:  # ansi text or an rgb frame
        if self.render_mode is None or self._obs_json is None:
            return None
        if self.render_mode == "ansi":
            return ansi_board(self._obs_json)
        return _render_rgb(self._engine.get_state(), mask=self._mask.tolist(), **self._last_step)

    def close(self) -> None:
        self._user_closed = True
        engine = getattr(self, "_engine", None)
        if engine is not None:
            engine.close()
        super().close()

    # ------------------------------------------------------------------ extras

    @property
    def engine(self) -> SwiftEngine:
        """The CLI client, for debugging requests (``get_state``, ``get_internal_state``...)."""
        return self._engine

    @property
    def engine_pid(self) -> int | None:
        """The Swift process id (a plain int, readable through vector envs' ``get_attr``)."""
        return self._engine.pid

    @property
    def observation_json(self) -> dict | None:
        """The last JSON observation as the CLI wrote it."""
        return self._obs_json

    def get_state(self) -> dict:
        """The full game state in the ``getState`` form (``protocol.md`` §6.6)."""
        return self._engine.get_state()

    def _copy_obs(self) -> Observation:
        """The current observation as new arrays (callers may keep or modify what they get)."""
        if self.flat_observation:
            return self._obs.copy()
        return {key: value.copy() for key, value in self._obs.items()}

    def _accept_observation(self, response: dict) -> None:
        self._obs_json = response["observation"]
        parts = encode_observation(self._obs_json)
        self._obs = flatten_observation(parts) if self.flat_observation else parts
        self._mask = np.array(response["info"]["action_mask"], dtype=bool)


class TruncateOnEngineCrash(gym.Wrapper):
    """For vector envs: a dead engine ends the episode (truncated) instead of raising.

    SB3's SubprocVecEnv and gymnasium's AsyncVectorEnv stop a whole worker
    on any exception, so one crashed Swift process would end the run. Here
    the crashing step returns the previous observation with reward 0,
    ``truncated=True`` and ``info["engine_crashed"]`` (the error text); the
    vector env's auto-reset then starts a fresh engine (see ``reset``).
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self._last_obs: Any = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._last_obs = obs
        return obs, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        try:
            obs, reward, terminated, truncated, info = self.env.step(action)
        except EngineError as error:
            if self._last_obs is None:
                raise
            warnings.warn(
                f"HackMatrix-v0: {str(error).splitlines()[0]}; the episode ends as truncated",
                EngineRestartWarning,
                stacklevel=2,
            )
            info = {
                "engine_crashed": str(error),
                "invalid_action": False,
                "action_mask": np.zeros(ACTION_COUNT, dtype=bool),
                "reward_components": dict.fromkeys(REWARD_COMPONENT_NAMES, 0.0),
            }
            return self._last_obs, 0.0, False, True, info
        self._last_obs = obs
        return obs, reward, terminated, truncated, info


def _action_index(action: Any) -> int:
    value = np.asarray(action)
    if value.size != 1 or not np.issubdtype(value.dtype, np.integer):
        raise TypeError(f"an action is one integer, got {action!r}")
    return int(value.reshape(()))


class _EpisodeStats:
    """Per-episode totals in ``info["episode_stats"]`` at termination (``training.md`` §6.3)."""

    def __init__(self, first_obs: dict) -> None:
        self.components = dict.fromkeys(REWARD_COMPONENT_NAMES, 0.0)
        self.breakdown: dict[str, float] = {}
        self.total_reward = 0.0
        self.steps = 0
        self.moves = self.siphons = self.programs = 0
        self.highest_stage = int(first_obs["stage"])

    def record(self, action: int, reward: float, info: dict, obs: dict) -> None:
        self.steps += 1
        self.total_reward += reward
        for key, value in info.get("reward_components", {}).items():
            self.components[key] = self.components.get(key, 0.0) + value
        for key, value in info.get("reward_breakdown", {}).items():
            self.breakdown[key] = self.breakdown.get(key, 0.0) + value
        if action < 4:
            self.moves += 1
        elif action == 4:
            self.siphons += 1
        else:
            self.programs += 1
        self.highest_stage = max(self.highest_stage, int(obs["stage"]))

    def summary(self) -> dict:
        return {
            "reward_components": dict(self.components),
            "reward_breakdown": dict(self.breakdown),
            "total_reward": self.total_reward,
            "programs_used": self.programs,
            "highest_stage": self.highest_stage,
            "action_counts": {"move": self.moves, "siphon": self.siphons, "program": self.programs},
            "steps": self.steps,
        }


# ---------------------------------------------------------------------- text board

_ENEMY_LETTER = {"virus": "V", "daemon": "D", "glitch": "G", "cryptog": "C"}


def _cell_text(cell: dict, is_player: bool, hp: int) -> str:
    enemy = cell.get("enemy")
    block = cell.get("block")
    if is_player:
        return f"@{hp}"
    if enemy is not None:
        text = _ENEMY_LETTER.get(enemy["type"], "?") + str(enemy["hp"])
        return text + ("*" if enemy.get("isStunned") else "")
    if "transmission" in cell:
        return f"t{cell['transmission']['turnsUntilSpawn']}"
    if block is not None:
        kind = block["blockType"]
        if kind == "data":
            text = f"#{block.get('points', 0)}"
        elif kind == "program":
            text = "P" + PROGRAM_NAMES[block["programActionIndex"] - FIRST_PROGRAM_ACTION][:2]
        else:
            text = "?"
        return text.lower() if block.get("isSiphoned") else text
    if cell.get("isExit"):
        return "EX"
    if cell.get("isDataSiphon"):
        return "S"
    if "credits" in cell:
        return f"c{cell['credits']}"
    if "energy" in cell:
        return f"e{cell['energy']}"
    return "."


def ansi_board(obs: dict) -> str:
    """A compact text picture of a JSON observation; row 5 on top, row 0 at the bottom."""
    owned = ",".join(PROGRAM_NAMES[a - FIRST_PROGRAM_ACTION] for a in obs["ownedPrograms"]) or "-"
    lines = [
        f"stage {obs['stage']} turn {obs['turn']}  hp {obs['playerHP']}  credits {obs['credits']}"
        f"  energy {obs['energy']}  siphons {obs['dataSiphons']}  atk {obs['baseAttack']}"
        f"  score {obs['score']}",
        f"programs: {owned}"
        + ("  [SHOW]" if obs["showActivated"] else "")
        + ("  [CALM]" if obs["scheduledTasksDisabled"] else ""),
    ]
    for r in range(GRID_SIZE - 1, -1, -1):
        row = obs["cells"][r]
        texts = [
            _cell_text(row[c], r == obs["playerRow"] and c == obs["playerCol"], obs["playerHP"])
            for c in range(GRID_SIZE)
        ]
        lines.append(f"{r} " + " ".join(f"{t:<4}" for t in texts).rstrip())
    lines.append("  " + " ".join(f"{c:<4}" for c in range(GRID_SIZE)).rstrip())
    return "\n".join(lines)
