"""Schedules as data (training.md §2.9): the values each kind gives, the per-update rows a
chunk reads, and that they equal the formulas the trainer used before schedules existed."""

import numpy as np
import pytest
import standin_env
from conftest import schedule_config

from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl import curriculum_flags, levers
from hackmatrix.purejaxrl.schedule import Schedule

NAMES = tuple(standin_env.REWARD_COMPONENT_NAMES)


def test_each_kind_gives_its_values():
    assert [float(Schedule.constant(0.3).at(u, 10)) for u in (0, 9)] == [0.3, 0.3]
    linear = Schedule.linear(0.2, 0.0, 0.5)  # reaches 0 at update 5 of 10, then holds
    assert [float(linear.at(u, 10)) for u in (0, 1, 5, 9)] == pytest.approx([0.2, 0.16, 0, 0])
    switch = Schedule.switch(0.0, 1.0, 3)
    assert [float(switch.at(u, 10)) for u in range(5)] == [0.0, 0.0, 0.0, 1.0, 1.0]
    assert not Schedule.constant(1.0).moves and linear.moves and switch.moves


def test_a_vector_schedule_moves_every_entry():
    schedule = Schedule.linear((0.0, 1.0), (1.0, 1.0), 1.0)
    np.testing.assert_allclose(schedule.at(2, 4), [0.5, 1.0])
    table = schedule.table(0, 3, 4)
    assert table.shape == (3, 2) and table.dtype == np.float32


def test_values_equal_the_formulas_of_the_flags():
    # training.md §1.1: c0 + (C - c0) x min(1, u / (F x N)), computed in float64, then f32.
    config = schedule_config(
        100, ent_coef=0.15, ent_coef_final=0.05, ent_coef_anneal=0.3, log_interval=7
    )
    rows = levers.ent_coef_schedule(config).table(40, 7, 100)
    expected = [np.float32(0.15 + (0.05 - 0.15) * min(1.0, u / 30.0)) for u in range(40, 47)]
    np.testing.assert_array_equal(rows, expected)


def test_only_moving_settings_become_chunk_inputs():
    config = schedule_config(100, program_bonus=1.0, program_levers_from_update=3)
    schedules = levers.run_schedules(config, NAMES)
    assert set(schedules) == {"program_levers"}  # ent_coef is constant: compiled in
    inputs = levers.chunk_inputs(schedules, 2, 4, config.num_updates)
    np.testing.assert_array_equal(inputs["program_levers"], [0.0, 1.0, 1.0, 1.0])


def test_a_curriculum_gives_env_params_for_every_update():
    jax_env = pytest.importorskip("hackmatrix.jax_env")
    config = schedule_config(8, curriculum="mixed", curriculum_anneal=0.5)
    curriculum = curriculum_flags.resolve(config)
    schedules = levers.run_schedules(config, NAMES, curriculum)
    inputs = levers.chunk_inputs(schedules, 0, 4, 8, jax_env, curriculum)
    params = inputs["env_params"]
    expected = [curriculum.probability(u, 8) for u in range(4)]  # 1, 0.75, 0.5, 0.25
    np.testing.assert_allclose(np.asarray(params.curriculum_prob), expected)
    constant = levers.run_schedules(schedule_config(8, curriculum="mixed"), NAMES, curriculum)
    assert "curriculum_probability" in constant  # a curriculum is always a traced input


def test_a_scheduled_selection_switches_on_its_update_and_reaches_the_act():
    """`--search-select-from-update 3`: a switch input, 0 before update 3 and 1 from it, that
    the trainer hands the act as `levers.search_select` (expert iteration reads it there)."""
    import types

    from hackmatrix.purejaxrl import train

    sharing = dict(algorithm="expert-iteration", search_acting="network", search_share=0.5)
    config = schedule_config(100, **sharing, search_select="split", search_select_from_update=3)
    schedules = levers.run_schedules(config, NAMES)
    assert set(schedules) == {"search_select"}
    inputs = levers.chunk_inputs(schedules, 2, 4, config.num_updates)
    np.testing.assert_array_equal(inputs["search_select"], [0.0, 1.0, 1.0, 1.0])
    assert [train.search_select_at(config, u) for u in (0, 2, 3, 99)] == [0.0, 0.0, 1.0, 1.0]
    parts = types.SimpleNamespace(fixed_weights=None)
    handed = train._Parts.levers(parts, {"search_select": inputs["search_select"][1]})
    assert float(handed.search_select) == 1.0
    unscheduled = schedule_config(100, **sharing, search_select="split")
    assert "search_select" not in levers.run_schedules(unscheduled, NAMES)
    assert cfg.search_select_note(config) is None and cfg.search_select_note(unscheduled) is None
    # a switch at or past the run's end is allowed (a resume may extend the run), and noted
    late = schedule_config(100, **sharing, search_select="split", search_select_from_update=100)
    note = cfg.search_select_note(late)
    assert note is not None and "update 100" in note and "(100)" in note and "resume" in note
