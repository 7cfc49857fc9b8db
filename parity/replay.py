"""Lock-step replay of one trace through two engines (or one, against the
trace's recorded expectations), stopping at the first divergence.

The result carries a report a person can act on: the trace, the step, the
action, each differing field with both values, the state before the step and
the command that reproduces it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from parity.compare import Difference, compare_outcomes, expectation_differences, state_differences
from parity.engines import Engine, Outcome
from parity.names import action_name
from parity.trace import Trace

START = -1  # the "step" of a divergence found right after reset/setState


@dataclass
class Divergence:
    trace_name: str
    step: int  # START, or the index of the step line
    action: int | None
    left_name: str  # reference side: the Swift engine, or "recorded" for expectations
    right_name: str
    differences: list[Difference]
    state_before: dict | None = None
    trace_path: str | None = None

    @property
    def fields(self) -> list[str]:
        return [d.field for d in self.differences]

    def command(self) -> str:
        where = self.trace_path or self.trace_name
        return f"python -m parity replay {where} --step {max(self.step, 0)}"

    def report(self) -> str:
        at = (
            "the start (reset/setState)"
            if self.step == START
            else f"step {self.step}, action {action_name(self.action)}"
        )
        lines = [f"DIVERGENCE in {self.trace_name} at {at}: {self.left_name} vs {self.right_name}"]
        lines += [d.line(self.left_name, self.right_name) for d in self.differences]
        if self.state_before is not None:
            lines.append("state before the step:")
            lines.append(json.dumps(self.state_before, sort_keys=True))
        lines.append(f"reproduce: {self.command()}")
        return "\n".join(lines)


@dataclass
class ReplayResult:
    trace: Trace
    steps_run: int = 0
    divergence: Divergence | None = None
    outcomes: list[Outcome] = field(default_factory=list)  # reference engine's, start first

    @property
    def ok(self) -> bool:
        return self.divergence is None


def replay(
    trace: Trace,
    left: Engine,
    right: Engine | None = None,
    *,
    check_expectations: bool = True,
    state_every: int = 1,
    stop_after: int | None = None,
    keep_outcomes: bool = False,
    on_step: Callable[[int, Outcome], None] | None = None,
) -> ReplayResult:
    """Replays ``trace``; ``left`` is the reference (Swift), ``right`` the engine under test.

    With ``right`` None only the recorded expectations are checked (a determinism
    check of the recording engine). ``state_every`` compares the full states
    every k steps (1 = after every step, 0 = never); ``stop_after`` ends the
    replay after that step index.
    """
    result = ReplayResult(trace=trace)
    engines = [left] + ([right] if right is not None else [])

    def diverged(
        step: int,
        action: int | None,
        names: tuple[str, str],
        diffs: list[Difference],
        state_before: dict | None,
    ) -> ReplayResult:
        result.divergence = Divergence(
            trace.name, step, action, names[0], names[1], diffs, state_before, trace.path
        )
        return result

    starts = [e.start(trace.seed, trace.start_state) for e in engines]
    if keep_outcomes:
        result.outcomes.append(starts[0])
    if on_step:
        on_step(START, starts[0])
    if right is not None:
        diffs = compare_outcomes(starts[0], starts[1])
        if state_every:
            diffs = diffs or state_differences(left.get_state(), right.get_state())
        if diffs:
            return diverged(START, None, (left.name, right.name), diffs, trace.start_state)
    if check_expectations and trace.start is not None:
        for engine, got in zip(engines, starts):
            diffs = expectation_differences(trace.start, got)
            if diffs:
                return diverged(START, None, ("recorded", engine.name), diffs, trace.start_state)

    state_before = left.get_state()
    for line in trace.steps:
        outcomes = [e.step(line.action) for e in engines]
        result.steps_run = line.step + 1
        if keep_outcomes:
            result.outcomes.append(outcomes[0])
        if on_step:
            on_step(line.step, outcomes[0])
        if right is not None:
            diffs = compare_outcomes(outcomes[0], outcomes[1])
            compare_states = state_every and (
                (line.step + 1) % state_every == 0
                or outcomes[0].done
                or line.step == len(trace.steps) - 1
            )
            if not diffs and compare_states and not outcomes[0].rejected:
                after = left.get_state()
                diffs = state_differences(after, right.get_state())
            else:
                after = None
            if diffs:
                return diverged(
                    line.step, line.action, (left.name, right.name), diffs, state_before
                )
        else:
            after = None
        if outcomes[0].rejected:
            return diverged(
                line.step,
                line.action,
                ("trace", left.name),
                [Difference("action accepted", "accepted", outcomes[0].rejected)],
                state_before,
            )
        if check_expectations:
            for engine, got in zip(engines, outcomes):
                diffs = expectation_differences(line, got)
                if diffs:
                    return diverged(
                        line.step, line.action, ("recorded", engine.name), diffs, state_before
                    )
        if stop_after is not None and line.step >= stop_after:
            break
        state_before = after if after is not None else left.get_state()
    return result
