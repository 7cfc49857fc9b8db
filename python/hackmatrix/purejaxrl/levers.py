"""The trainer's scheduled settings, as data (training.md §1.1, §1.7).

`run_schedules` turns a config into the schedules that move during a run (the entropy
coefficient's anneal, the reward weights' anneal, the program levers' switch, the search's
selection switch, the value head's warm-up, the curriculum probability); settings that never
move are compiled into the trainer as constants. `chunk_inputs` evaluates the moving ones for
every update of one compiled chunk: the chunk reads row i at its update i, so a schedule
switches on the update it names.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import jax
import numpy as np

from . import curriculum_flags
from .schedule import Schedule


def weight_vector(weights: dict | None, reward_names) -> np.ndarray:
    """f32[15]: the weight of each component in canonical order, 1 for those not named."""
    from .config import check_reward_weight_names

    weights = weights or {}
    check_reward_weight_names(weights, tuple(reward_names))
    return np.array([weights.get(name, 1.0) for name in reward_names], np.float32)


def ent_coef_schedule(config) -> Schedule:
    """`--ent-coef`, moved to `--ent-coef-final` over the first `--ent-coef-anneal`."""
    if config.ent_coef_anneal is None or config.ent_coef_final is None:
        return Schedule.constant(config.ent_coef)
    return Schedule.linear(config.ent_coef, config.ent_coef_final, config.ent_coef_anneal)


def weights_schedule(config, reward_names) -> Schedule | None:
    """`--reward-weights`, moved to `--reward-weights-final` (1 unless named) by the anneal;
    None without weights."""
    if config.reward_weights is None:
        return None
    start = tuple(float(config.reward_weights.get(n, 1.0)) for n in reward_names)
    if config.reward_weights_anneal is None:
        return Schedule.constant(start)
    final = config.reward_weights_final or {}
    end = tuple(float(final.get(n, 1.0)) for n in reward_names)
    return Schedule.linear(start, end, config.reward_weights_anneal)


def _switch_from(update: int) -> Schedule | None:
    """0 before `update`, 1 from it; None for update 0 (on from the start: nothing moves)."""
    return Schedule.switch(0.0, 1.0, update) if update > 0 else None


def program_levers_schedule(config) -> Schedule | None:
    """0 before `--program-levers-from-update`, 1 from it; None when the levers never wait."""
    return _switch_from(config.program_levers_from_update)


def search_select_schedule(config) -> Schedule | None:
    """0 before `--search-select-from-update` (the first envs are searched), 1 from it (as
    `--search-select` picks them); None when the selection never waits."""
    return _switch_from(config.search_select_from_update)


def value_warmup_schedule(config) -> Schedule | None:
    """1 while only the value head trains (the first `--value-warmup-updates`), 0 from then
    on; None without a warm-up."""
    warmup = config.value_warmup_updates
    return Schedule.switch(1.0, 0.0, warmup) if warmup > 0 else None


def switched_on(schedule: Schedule | None, update: int, num_updates: int) -> float:
    """A switch's value at `update`: 1 for none (on from the start)."""
    return 1.0 if schedule is None else float(schedule.at(update, num_updates))


def curriculum_schedule(curriculum) -> Schedule | None:
    """The chance a reset is a curriculum start: `p0`, falling to 0 by `--curriculum-anneal`."""
    if curriculum is None:
        return None
    if curriculum.anneal is None:
        return Schedule.constant(curriculum.p0)
    return Schedule.linear(curriculum.p0, 0.0, curriculum.anneal)


def run_schedules(config, reward_names, curriculum=None) -> dict[str, Schedule]:
    """The schedules of `config` that become a chunk's traced inputs, by input name.

    The curriculum's env params are always an input when there is a curriculum, moving or
    not, so a resume can change its probability without a new compile."""
    schedules = {
        "ent_coef": ent_coef_schedule(config),
        "weights": weights_schedule(config, reward_names),
        "program_levers": program_levers_schedule(config),
        "search_select": search_select_schedule(config),
        "value_only": value_warmup_schedule(config),
        "curriculum_probability": curriculum_schedule(curriculum),
    }
    return {
        name: s
        for name, s in schedules.items()
        if s is not None and (s.moves or name == "curriculum_probability")
    }


def chunk_inputs(
    schedules: dict[str, Schedule],
    first_update: int,
    length: int,
    num_updates: int,
    env: ModuleType | None = None,
    curriculum=None,
) -> dict[str, Any]:
    """{input: value per update} for the `length` updates from `first_update` (a leading
    axis of `length` on every leaf); the curriculum's probability becomes env params."""
    inputs: dict[str, Any] = {}
    for name, schedule in schedules.items():
        if name != "curriculum_probability":
            inputs[name] = schedule.table(first_update, length, num_updates)
            continue
        if env is None:
            raise ValueError("a curriculum's chunk inputs need the game module (env)")
        rows = [
            curriculum_flags.env_params_for(env, curriculum, float(schedule.at(u, num_updates)))
            for u in range(first_update, first_update + length)
        ]
        inputs["env_params"] = jax.tree_util.tree_map(lambda *xs: np.stack(xs), *rows)
    return inputs


def value_at(schedule: Schedule | None, update: int, num_updates: int) -> float | None:
    """A scalar schedule's value at `update` (for the logs); None for no schedule."""
    return None if schedule is None else float(schedule.at(update, num_updates))
