"""What a corpus or fuzz run exercised: actions taken, programs executed,
enemy types seen, stages reached, outcomes and non-zero reward components.

Everything is read from the flat observation, the action and the reward
components (the same for both engines), so coverage does not care which
engine produced them. ``table()`` prints every category with its count so
that a zero (a gap) stands out.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from hackmatrix.names import ENEMY_TYPES, GRID_OFFSET, REWARD_COMPONENT_NAMES
from parity.names import ACTION_NAMES

_GRID = slice(GRID_OFFSET, None)


def _stage_of(obs: np.ndarray) -> np.ndarray:
    return np.rint(obs[..., 5] * 7).astype(int) + 1


@dataclass
class Coverage:
    actions: Counter = field(default_factory=Counter)
    enemies_seen: Counter = field(default_factory=Counter)  # observations showing the type
    stages: Counter = field(default_factory=Counter)  # observations on the stage
    outcomes: Counter = field(default_factory=Counter)
    components: Counter = field(default_factory=Counter)  # steps with the component non-zero
    steps: int = 0
    episodes: int = 0

    def add_start(self, obs: np.ndarray) -> None:
        self.add_starts(np.asarray(obs)[None])

    def add_step(
        self, action: int, obs: np.ndarray, components: dict[str, float], done: bool
    ) -> None:
        values = np.array([[components[k] for k in REWARD_COMPONENT_NAMES]], np.float64)
        self.add_steps(np.array([action]), np.asarray(obs)[None], values, np.array([done]))

    def add_starts(self, obs: np.ndarray) -> None:
        self.episodes += len(obs)
        self._observe(obs)

    def add_steps(
        self, actions: np.ndarray, obs: np.ndarray, components: np.ndarray, done: np.ndarray
    ) -> None:
        """Batched: ``actions[n]``, ``obs[n,1545]``, ``components[n,15]``, ``done[n]``.

        ``components`` are in the canonical order.
        """
        self.steps += len(actions)
        self.actions.update(np.asarray(actions).tolist())
        self._observe(obs)
        for name, count in zip(REWARD_COMPONENT_NAMES, (np.asarray(components) != 0).sum(axis=0)):
            if count:
                self.components[name] += int(count)
        finished = obs[np.asarray(done, bool)]
        if len(finished):
            won = finished[:, 2] > 0  # health is 0 on the death observation only
            self.outcomes["won"] += int(won.sum())
            self.outcomes["died"] += int((~won).sum())

    def _observe(self, obs: np.ndarray) -> None:
        obs = np.asarray(obs)
        self.stages.update(_stage_of(obs).tolist())
        grid = obs[:, _GRID].reshape(len(obs), 36, 42)
        for channel, name in enumerate(ENEMY_TYPES):
            count = int((grid[:, :, channel] > 0).any(axis=1).sum())
            if count:
                self.enemies_seen[name] += count

    def merge(self, other: Coverage) -> None:
        for name in ("actions", "enemies_seen", "stages", "outcomes", "components"):
            getattr(self, name).update(getattr(other, name))
        self.steps += other.steps
        self.episodes += other.episodes

    def gaps(self) -> list[str]:
        missing = [f"action {ACTION_NAMES[a]}" for a in range(28) if not self.actions[a]]
        missing += [f"enemy {e}" for e in ENEMY_TYPES if not self.enemies_seen[e]]
        missing += [f"stage {s}" for s in range(1, 9) if not self.stages[s]]
        missing += [f"outcome {o}" for o in ("died", "won") if not self.outcomes[o]]
        missing += [f"component {c}" for c in REWARD_COMPONENT_NAMES if not self.components[c]]
        return missing

    def table(self) -> str:
        rows = [
            f"coverage: {self.episodes} episodes, {self.steps} steps",
            "",
            "| action | count | | action | count |",
            "| --- | --- | --- | --- | --- |",
        ]
        half = 14
        for a in range(half):
            b = a + half
            rows.append(
                f"| {a} {ACTION_NAMES[a]} | {self.actions[a]} | "
                f"| {b} {ACTION_NAMES[b]} | {self.actions[b]} |"
            )
        rows += ["", "| enemy type seen | observations |", "| --- | --- |"]
        rows += [f"| {e} | {self.enemies_seen[e]} |" for e in ENEMY_TYPES]
        rows += ["", "| stage | observations |", "| --- | --- |"]
        rows += [f"| {s} | {self.stages[s]} |" for s in range(1, 9)]
        rows += ["", "| outcome | episodes |", "| --- | --- |"]
        rows += [f"| {o} | {self.outcomes[o]} |" for o in ("died", "won")]
        rows += ["", "| reward component | non-zero steps |", "| --- | --- |"]
        rows += [f"| {c} | {self.components[c]} |" for c in REWARD_COMPONENT_NAMES]
        gaps = self.gaps()
        rows += ["", "gaps: " + (", ".join(gaps) if gaps else "none")]
        return "\n".join(rows)

    def to_json(self) -> dict:
        return {
            "episodes": self.episodes,
            "steps": self.steps,
            "actions": {ACTION_NAMES[a]: self.actions[a] for a in range(28)},
            "enemies_seen": {e: self.enemies_seen[e] for e in ENEMY_TYPES},
            "stages": {str(s): self.stages[s] for s in range(1, 9)},
            "outcomes": {o: self.outcomes[o] for o in ("died", "won")},
            "components": {c: self.components[c] for c in REWARD_COMPONENT_NAMES},
            "gaps": self.gaps(),
        }
