"""A tiny deterministic stand-in engine for testing the harness itself.

It is not HackMatrix: the player walks on the 6x6 board, picks up a credit
on every even step, loses a hit point when it walks into row 5 and the
episode ends at hp 0. It fills the same observation entries, mask and reward
components that the real engines do, so every comparison path is exercised.
:class:`Perturbed` wraps an engine and corrupts one field at one step: the
harness must report exactly that.
"""

from __future__ import annotations

import copy

import numpy as np

from hackmatrix.names import ACTION_COUNT, OBS_SIZE, REWARD_COMPONENT_NAMES
from parity.engines import Outcome

MOVES = {0: (1, 0), 1: (-1, 0), 2: (0, -1), 3: (0, 1)}


class FakeEngine:
    name = "fake"

    def __init__(self, name: str = "fake") -> None:
        self.name = name
        self.state: dict | None = None

    def start(self, seed, state):
        if state is not None:
            self.state = copy.deepcopy(state)
        else:
            self.state = {
                "seed": seed,
                "stepIndex": 0,
                "row": seed % 6,
                "col": (seed // 6) % 6,
                "hp": 3,
                "credits": 0,
            }
        return self._outcome(None, False)

    def _mask(self):
        mask = np.zeros(ACTION_COUNT, bool)
        if self.state["hp"] == 0:
            return mask
        for action, (dr, dc) in MOVES.items():
            mask[action] = 0 <= self.state["row"] + dr < 6 and 0 <= self.state["col"] + dc < 6
        return mask

    def _outcome(self, components, done):
        s = self.state
        obs = np.zeros(OBS_SIZE, np.float32)
        obs[0], obs[1] = np.float32(s["row"] / 5), np.float32(s["col"] / 5)
        obs[2], obs[3] = np.float32(s["hp"] / 3), np.float32(min(s["credits"], 50) / 50)
        obs[33 + 42 * (6 * s["row"] + s["col"]) + 41] = 1.0
        reward = (
            None
            if components is None
            else float(sum(components[k] for k in REWARD_COMPONENT_NAMES))
        )
        return Outcome(obs=obs, mask=self._mask(), reward=reward, components=components, done=done)

    def step(self, action):
        if not self._mask()[action]:
            return Outcome(
                obs=np.zeros(OBS_SIZE), mask=np.zeros(ACTION_COUNT), rejected="action_masked"
            )
        s = self.state
        components = dict.fromkeys(REWARD_COMPONENT_NAMES, 0.0)
        components["step_penalty"] = -0.01
        dr, dc = MOVES[action]
        s["row"], s["col"] = s["row"] + dr, s["col"] + dc
        if s["stepIndex"] % 2 == 0:
            s["credits"] += 1
            components["resource_gain"] = 0.05
        if s["row"] == 5:
            s["hp"] -= 1
            components["damage_penalty"] = -1.0
        s["stepIndex"] += 1
        return self._outcome(components, s["hp"] == 0)

    def get_state(self):
        return copy.deepcopy(self.state)

    def close(self):
        pass


class Perturbed:
    """Wraps an engine; at step ``at_step`` applies ``mutate(outcome_or_state)``."""

    def __init__(self, engine, at_step: int, *, outcome=None, state=None) -> None:
        self.engine, self.name = engine, "perturbed"
        self.at_step, self.mutate_outcome, self.mutate_state = at_step, outcome, state
        self.steps = 0

    def start(self, seed, state):
        self.steps = 0
        return self.engine.start(seed, state)

    def step(self, action):
        outcome = self.engine.step(action)
        if self.steps == self.at_step and self.mutate_outcome:
            self.mutate_outcome(outcome)
        self.steps += 1
        return outcome

    def get_state(self):
        state = self.engine.get_state()
        if self.steps == self.at_step + 1 and self.mutate_state:
            self.mutate_state(state)
        return state

    def close(self):
        self.engine.close()
