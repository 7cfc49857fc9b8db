"""Builds the committed trace corpus in parity/traces/ by recording the Swift
reference engine (``python -m parity corpus``).

- scenarios/: every scenario of game-rules.md §16 (plus a few extra hand-made
  situations) as a setState start and its actions; the §16 reset checks as
  reset(seed) traces;
- play/: random masked play and greedy exit-seeking play from reset seeds;
- stages/: setState starts on stages 2..8 with many programs and resources,
  played by the greedy exit-seeking policy (stage completion, victory).
"""

from __future__ import annotations

import copy
from pathlib import Path

from parity.engines import Engine
from parity.policies import GreedyExitPolicy, RandomPolicy, ScriptedPolicy
from parity.record import record
from parity.scenarios import RESET_SCENARIOS, SCENARIOS
from parity.trace import write_trace

TRACES = Path(__file__).resolve().parent / "traces"
RANDOM_SEEDS = range(1, 9)
GREEDY_SEEDS = range(100, 106)


def stage_start(reference: Engine, seed: int, stage: int) -> dict:
    """The reset board of ``seed`` moved to ``stage``, with healing and plenty to spend."""
    reference.start(seed, None)
    state = copy.deepcopy(reference.get_state())
    state["stage"] = stage
    state["scheduledTaskInterval"] = state["nextScheduledTaskTurn"] = 13 - stage
    state["player"].update(credits=40, energy=40, dataSiphons=2)
    state["ownedPrograms"] = [10, 14, 19, 20, 26]  # WAIT, UNDO, RESET, CALM, ATK+
    return state


def build(reference: Engine, out: Path = TRACES, log=print) -> list[Path]:
    written: list[Path] = []

    def save(trace, relative: str) -> None:
        written.append(write_trace(trace, out / relative))
        last = trace.steps[-1] if trace.steps else None
        log(f"{relative}: {len(trace.steps)} steps{' (done)' if last and last.done else ''}")

    for scenario in SCENARIOS:
        trace = record(
            reference,
            ScriptedPolicy(list(scenario.actions)),
            state=scenario.state,
            note=f"{scenario.name}: {scenario.note}",
        )
        save(trace, f"scenarios/{scenario.name}.jsonl")
    for scenario in RESET_SCENARIOS:
        trace = record(
            reference,
            RandomPolicy(scenario.seed),
            seed=scenario.seed,
            max_steps=20,
            note=f"{scenario.name}: {scenario.note}, then 20 random actions",
        )
        save(trace, f"scenarios/{scenario.name}.jsonl")
    for seed in RANDOM_SEEDS:
        save(
            record(
                reference,
                RandomPolicy(seed),
                seed=seed,
                max_steps=400,
                note=f"uniform random masked policy, seed {seed}",
            ),
            f"play/random-{seed}.jsonl.gz",
        )
    for seed in GREEDY_SEEDS:
        save(
            record(
                reference,
                GreedyExitPolicy(seed),
                seed=seed,
                max_steps=600,
                note=f"greedy exit-seeking policy, seed {seed}",
            ),
            f"play/greedy-{seed}.jsonl.gz",
        )
    for stage in range(2, 9):
        attempts = 12 if stage == 8 else 1
        for attempt in range(attempts):  # stage 8: look for a seed whose run is won
            seed = 1000 * stage + attempt
            trace = record(
                reference,
                GreedyExitPolicy(seed, explore=0.05),
                state=stage_start(reference, seed, stage),
                max_steps=400,
                note=f"stage {stage} start (setState), greedy exit-seeking, seed {seed}",
            )
            won = (
                trace.steps
                and trace.steps[-1].done
                and trace.steps[-1].reward_components["victory"] > 0
            )
            if stage < 8 or won or attempt == attempts - 1:
                save(trace, f"stages/stage-{stage}.jsonl.gz")
                break
    return written
