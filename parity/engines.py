"""Adapters that give both engines one shape: start, step, get_state.

Every adapter returns an :class:`Outcome` holding the flat float32[1545]
observation, the bool[28] mask, the total reward, the 15 components and
``done``, so the comparison code never knows which engine it looks at.

- :class:`SwiftAdapter` drives the Swift CLI through ``hackmatrix.swift_bridge.client``
  and turns its JSON observation into the flat vector with the reference
  encoder of ``hackmatrix.swift_bridge.observation`` (``observation.md`` §9). It also asks
  for the engine's own ``obs_digest`` (``protocol.md`` §5.9), kept in
  ``Outcome.extra["obs_digest"]``, so the Swift numeric encoder is checked too.
- :class:`JaxAdapter` runs ``hackmatrix.jax_env`` (jitted, on CPU) one episode
  at a time; the batched fuzzer has its own vmapped path (``parity.fuzz``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from hackmatrix.names import ACTION_COUNT, OBS_SIZE, REWARD_COMPONENT_NAMES


@dataclass
class Outcome:
    """What an engine showed after a start (reset/setState) or a step."""

    obs: np.ndarray
    mask: np.ndarray
    reward: float | None = None  # None after a start
    components: dict[str, float] | None = None
    done: bool = False
    rejected: str | None = None  # the engine refused the action (error code / "invalid_action")
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.obs = np.array(self.obs, dtype=np.float32).reshape(-1)  # a writable copy
        self.mask = np.array(self.mask, dtype=bool).reshape(-1)
        if self.obs.shape != (OBS_SIZE,):
            raise ValueError(f"observation has {self.obs.shape[0]} entries, expected {OBS_SIZE}")
        if self.mask.shape != (ACTION_COUNT,):
            raise ValueError(f"mask has {self.mask.shape[0]} entries, expected {ACTION_COUNT}")


class Engine(Protocol):
    name: str

    def start(self, seed: int | None, state: dict | None) -> Outcome: ...

    def step(self, action: int) -> Outcome: ...

    def get_state(self) -> dict: ...

    def close(self) -> None: ...


def _components_from(mapping) -> dict[str, float]:
    missing = [k for k in REWARD_COMPONENT_NAMES if k not in mapping]
    if missing:
        raise KeyError(f"engine reported no reward component(s) {missing}")
    return {k: float(mapping[k]) for k in REWARD_COMPONENT_NAMES}


def swift_flat_observation(obs_json: dict) -> np.ndarray:
    """The reference encoder (observation.md §9) applied to a JSON observation."""
    from hackmatrix.swift_bridge import observation

    return np.asarray(observation.encode_flat(obs_json), dtype=np.float32)


def swift_obs_digest(response: dict) -> str:
    """The ``obs_digest`` a Swift response carries when its request asked for it."""
    digest = response.get("info", {}).get("obs_digest")
    if digest is None:
        raise RuntimeError(
            "the Swift CLI sent no info.obs_digest for a request with obsDigest: true "
            "(it needs protocol 2.1); rebuild it with ./swift-build"
        )
    return digest


class SwiftAdapter:
    """The Swift reference engine behind its JSON-lines CLI."""

    name = "swift"

    def __init__(self, binary: str | None = None) -> None:
        from hackmatrix.swift_bridge.client import SwiftEngine

        self._cli = SwiftEngine(binary) if binary else SwiftEngine()

    def start(self, seed: int | None, state: dict | None) -> Outcome:
        # A null seed is an absent one (protocol.md §3.2): the engine picks it.
        request = (
            {"action": "setState", "state": state}
            if state is not None
            else {"action": "reset", "seed": seed}
        )
        response = self._cli.request({**request, "obsDigest": True})
        return Outcome(
            obs=swift_flat_observation(response["observation"]),
            mask=response["info"]["action_mask"],
            extra={"obs_digest": swift_obs_digest(response)},
        )

    def step(self, action: int) -> Outcome:
        from hackmatrix.swift_bridge.client import CliError

        try:
            response = self._cli.request(
                {"action": "step", "actionIndex": int(action), "obsDigest": True}
            )
        except CliError as error:
            state = self._cli.get_state() if error.code != "no_game" else None
            return Outcome(
                obs=np.zeros(OBS_SIZE, np.float32),
                mask=np.zeros(ACTION_COUNT, bool),
                rejected=f"{error.code}: {error.message}",
                extra={"state": state},
            )
        info = response["info"]
        return Outcome(
            obs=swift_flat_observation(response["observation"]),
            mask=info["action_mask"],
            reward=float(response["reward"]),
            components=_components_from(info["reward_components"]),
            done=bool(response["done"]),
            extra={"obs_digest": swift_obs_digest(response)},
        )

    def get_state(self) -> dict:
        return self._cli.get_state()

    def close(self) -> None:
        self._cli.close()


class JaxAdapter:
    """The JAX engine, one episode at a time (jitted step, CPU)."""

    name = "jax"

    def __init__(self) -> None:
        from parity.jaxsetup import configure_jax

        configure_jax()
        import jax

        from hackmatrix import jax_env

        self._env = jax_env
        self._params = jax_env.EnvParams()
        self._key = jax.random.PRNGKey(0)  # unused by the rules (architecture.md)
        self._reset = jax.jit(jax_env.reset_from_seed)
        self._observe = jax.jit(
            lambda s: (jax_env.flatten_observation(jax_env.observe(s)), jax_env.action_mask(s))
        )

        def step_and_mask(key, state, action, params):
            obs, new_state, reward, done, info = jax_env.step(key, state, action, params)
            return obs, new_state, reward, done, info, jax_env.action_mask(new_state)

        self._step = jax.jit(step_and_mask)
        self._jax = jax
        self.state = None

    def _canonical(self, state):
        # Plain (non-weak) arrays, so every state has one jit signature: no recompiles per trace.
        return self._jax.device_put(self._jax.tree.map(np.asarray, state))

    def start(self, seed: int | None, state: dict | None) -> Outcome:
        import jax.numpy as jnp

        if state is not None:
            self.state = self._canonical(self._env.state_from_json(state))
            obs, mask = self._observe(self.state)
        else:
            obs, state = self._reset(jnp.uint32(seed), self._params)
            self.state = self._canonical(state)
            _, mask = self._observe(self.state)
        return Outcome(obs=np.asarray(obs), mask=np.asarray(mask))

    def step(self, action: int) -> Outcome:
        import jax.numpy as jnp

        obs, new_state, reward, done, info, mask = self._step(
            self._key, self.state, jnp.int32(action), self._params
        )
        info = self._jax.device_get(info)
        if bool(info["invalid_action"]):
            return Outcome(
                obs=np.asarray(obs),
                mask=np.asarray(mask),
                rejected="invalid_action",
                extra={"state": self.get_state()},
            )
        self.state = new_state
        return Outcome(
            obs=np.asarray(obs),
            mask=np.asarray(mask),
            reward=float(reward),
            components=_components_from(info["reward_components"]),
            done=bool(done),
        )

    def get_state(self) -> dict:
        return self._env.state_to_json(self.state)

    def close(self) -> None:
        self.state = None


def make_engine(name: str, binary: str | None = None) -> Engine:
    if name == "swift":
        return SwiftAdapter(binary)
    if name == "jax":
        return JaxAdapter()
    raise ValueError(f"unknown engine {name!r} (expected 'swift' or 'jax')")
