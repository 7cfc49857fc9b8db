"""Recording: play a policy in one engine and write what it produced as a trace
(``protocol.md`` §9) with every expectation key filled in."""

from __future__ import annotations

from collections.abc import Callable

from parity.engines import Engine, Outcome
from parity.trace import StartExpect, StepLine, Trace, obs_digest

ENGINE_VERSION = "0.1.0"


def record(
    engine: Engine,
    policy: Callable[[Outcome, Engine], int | None],
    *,
    seed: int | None = None,
    state: dict | None = None,
    max_steps: int = 1000,
    note: str = "",
) -> Trace:
    """Plays until done, until the policy returns None, or for ``max_steps`` steps."""
    if (seed is None) == (state is None):
        raise ValueError("record needs exactly one start: a seed or a state")
    header_seed = seed if state is None else state.get("seed", 0)
    trace = Trace(
        seed=header_seed, source=f"{engine.name} {ENGINE_VERSION}", note=note, start_state=state
    )
    outcome = engine.start(seed, state)
    trace.start = StartExpect(obs_digest=obs_digest(outcome.obs), mask=outcome.mask.tolist())
    for index in range(max_steps):
        if not outcome.mask.any():
            break
        action = policy(outcome, engine)
        if action is None:
            break
        outcome = engine.step(action)
        if outcome.rejected:
            raise ValueError(
                f"{engine.name} rejected action {action} at step {index}: {outcome.rejected}"
            )
        trace.steps.append(
            StepLine(
                step=index,
                action=int(action),
                obs_digest=obs_digest(outcome.obs),
                mask=outcome.mask.tolist(),
                reward=outcome.reward,
                reward_components=outcome.components,
                done=outcome.done,
            )
        )
        if outcome.done:
            break
    return trace
