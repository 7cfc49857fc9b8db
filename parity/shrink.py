"""Shrinking a diverging trace to a small one that still diverges.

First choice: start from the reference engine's state just before the
diverging step (``setState``) and keep only that one action. If that does not
reproduce (the state is then not the whole story, itself a finding), remove
chunks of earlier actions (delta debugging) while the divergence persists.
"""

from __future__ import annotations

from collections.abc import Callable

from parity.engines import Engine
from parity.replay import Divergence
from parity.trace import StepLine, Trace

DivergenceCheck = Callable[[Trace], "Divergence | None"]


def _trace(start_seed, start_state, actions, note) -> Trace:
    seed = start_state.get("seed", 0) if start_state is not None else start_seed
    return Trace(
        seed=seed,
        source="manual",
        note=note,
        start_state=start_state,
        steps=[StepLine(step=i, action=a) for i, a in enumerate(actions)],
    )


def _real(divergence: Divergence | None) -> bool:
    """A divergence that is not just "both refused an action that shrinking made illegal"."""
    if divergence is None:
        return False
    return not (
        divergence.fields == ["action accepted"]
        and "accepted" not in (divergence.differences[0].left, divergence.differences[0].right)
    )


def state_before(reference: Engine, trace: Trace, step: int) -> dict:
    reference.start(trace.seed, trace.start_state)
    for action in trace.actions[:step]:
        reference.step(action)
    return reference.get_state()


def shrink(
    trace: Trace,
    divergence: Divergence,
    check: DivergenceCheck,
    reference: Engine,
    budget: int = 60,
) -> Trace:
    """A trace ending at the diverging step that still diverges (check() on it returns one)."""
    step = max(divergence.step, 0)
    actions = trace.actions[: step + 1]
    note = f"shrunk from {trace.name}, divergence at step {divergence.step}"
    if step > 0 or trace.start_state is not None:
        single = _trace(
            None, state_before(reference, trace, step), actions[-1:], note + " (setState start)"
        )
        if _real(check(single)):
            return single
    prefix, last = actions[:-1], actions[-1:]
    chunk = max(len(prefix) // 2, 1)
    while chunk >= 1 and budget > 0 and prefix:
        index, removed_any = 0, False
        while index < len(prefix) and budget > 0:
            candidate = prefix[:index] + prefix[index + chunk :]
            budget -= 1
            if _real(check(_trace(trace.seed, trace.start_state, candidate + last, note))):
                prefix, removed_any = candidate, True
            else:
                index += chunk
        if not removed_any:
            chunk //= 2
    return _trace(trace.seed, trace.start_state, prefix + last, note)
