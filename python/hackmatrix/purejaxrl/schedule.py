"""Schedules as data: a value that moves with the update counter (training.md §1.1).

One type serves every scheduled setting of the trainer: the entropy coefficient, the reward
weights, the program levers' switch and the curriculum probability. A schedule is a frozen
value; the driver evaluates it for each update of a compiled chunk (`table`) and feeds the
rows to the chunk as traced inputs, so a new value never recompiles and no chunk is cut
short where a schedule switches.

Values are computed in float64 on the host and rounded to float32 once, so a schedule
reads exactly what the trainer read before schedules became data.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np

Kind = Literal["constant", "linear", "switch"]


@dataclasses.dataclass(frozen=True)
class Schedule:
    """`start` until the schedule moves, then `end`:

    - constant: `start` throughout;
    - linear: `start` moved linearly to `end` over the first `fraction` of the run's
      updates (`end` from update `fraction x num_updates` on);
    - switch: `start` before update `at_update`, `end` from it on.

    `start` and `end` are floats or equal-length tuples of floats (one schedule for a
    vector, e.g. the 15 reward-component weights).
    """

    kind: Kind
    start: float | tuple[float, ...]
    end: float | tuple[float, ...] | None = None
    fraction: float = 0.0
    at_update: int = 0

    @staticmethod
    def constant(value: float | tuple[float, ...]) -> Schedule:
        return Schedule("constant", value)

    @staticmethod
    def linear(start, end, fraction: float) -> Schedule:
        return Schedule("linear", start, end, fraction=fraction)

    @staticmethod
    def switch(before, after, at_update: int) -> Schedule:
        return Schedule("switch", before, after, at_update=at_update)

    @property
    def moves(self) -> bool:
        """Whether the value can change during a run (else it is compiled in as a constant)."""
        return self.kind != "constant"

    def progress(self, update: int, num_updates: int) -> float:
        """0 at the start, 1 once the schedule has reached `end`."""
        if self.kind == "constant":
            return 0.0
        if self.kind == "switch":
            return 1.0 if update >= self.at_update else 0.0
        return linear_progress(self.fraction, update, num_updates)

    def at(self, update: int, num_updates: int) -> np.ndarray:
        """The value in force at `update` (float64; a vector for a vector schedule)."""
        start = np.asarray(self.start, np.float64)
        if self.kind == "constant":
            return start
        end = np.asarray(self.end, np.float64)
        t = self.progress(update, num_updates)
        if self.kind == "switch":
            return end if t else start
        return start + (end - start) * t

    def table(self, first_update: int, length: int, num_updates: int) -> np.ndarray:
        """float32[length, ...]: the values of updates first_update .. first_update+length-1."""
        rows = [self.at(first_update + i, num_updates) for i in range(length)]
        return np.asarray(rows, np.float64).astype(np.float32)


def linear_progress(fraction: float, update: int, num_updates: int) -> float:
    """How far a schedule lasting the first `fraction` of `num_updates` has gone at `update`:
    0 at the start, 1 from update `fraction x num_updates` on."""
    end = fraction * num_updates
    return min(1.0, update / end) if end > 0 else 1.0
