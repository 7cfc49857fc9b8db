"""The value-calibration probe's arithmetic (hackmatrix/analysis/value_calibration.py)."""

import re

import numpy as np
import pytest

from hackmatrix.analysis.value_calibration import calibration_rows, discounted_returns


def test_returns_are_discounted_and_cut_at_each_games_end():
    # game 0 ends on step 1; game 1 runs through all three steps without ending
    rewards = np.array([[1.0, 1.0], [2.0, 1.0], [5.0, 1.0]])
    done = np.array([[False, False], [True, False], [False, False]])
    live = np.array([[True, True], [True, True], [False, True]])
    returns, finished = discounted_returns(rewards, done, live, gamma=0.5)
    assert returns[:, 0] == pytest.approx([1.0 + 0.5 * 2.0, 2.0, 0.0])  # step 2 not its own
    assert returns[:, 1] == pytest.approx([1.0 + 0.5 + 0.25, 1.5, 1.0])
    assert finished.tolist() == [True, False]


def test_a_game_ending_on_the_first_step_pays_its_one_reward():
    returns, finished = discounted_returns(
        np.array([[3.0], [9.0]]), np.array([[True], [False]]), np.array([[True], [False]]), 0.99
    )
    assert returns[:, 0].tolist() == [3.0, 0.0] and finished.tolist() == [True]


@pytest.mark.parametrize(
    "shapes, gamma, message",
    [(((2, 3), (2, 3), (3, 2)), 0.9, "one [T, B] shape"), (((2, 3),) * 3, 1.5, "gamma")],
)
def test_bad_input_is_a_clear_error(shapes, gamma, message):
    rewards, done, live = (np.zeros(shape) for shape in shapes)
    with pytest.raises(ValueError, match=re.escape(message)):
        discounted_returns(rewards, done.astype(bool), live.astype(bool), gamma)


def test_rows_read_bias_error_and_explained_variance_per_stage():
    values = np.array([[1.0, 4.0], [3.0, 10.0]])
    returns = np.array([[2.0, 4.0], [2.0, 8.0]])
    stages = np.array([[1, 2], [1, 2]])
    keep = np.array([[True, True], [True, False]])  # one step left out
    rows = {row["stage"]: row for row in calibration_rows(values, returns, stages, keep)}
    assert rows[0]["steps"] == 3
    assert rows[1]["bias"] == pytest.approx(0.0)  # -1 and +1
    assert rows[1]["rmse"] == pytest.approx(1.0)
    assert rows[1]["explained"] != rows[1]["explained"]  # one return value: no variance, NaN
    assert rows[2]["steps"] == 1 and rows[2]["value"] == pytest.approx(4.0)
    assert rows[3]["steps"] == 0 and np.isnan(rows[3]["rmse"])
    # all three kept steps: errors -1, 0, +1 around returns 2, 4, 2
    assert rows[0]["explained"] == pytest.approx(
        1 - np.var([-1.0, 0.0, 1.0]) / np.var([2.0, 4.0, 2.0])
    )


def test_a_perfect_value_explains_everything():
    returns = np.array([[1.0, 2.0, 3.0]])
    rows = calibration_rows(returns, returns, np.ones((1, 3), int), np.ones((1, 3), bool))
    assert rows[0]["explained"] == pytest.approx(1.0) and rows[0]["rmse"] == 0.0
