"""Board geometry (game-rules.md §1.1): cells, rows, columns, neighbours, distances.

Cell c = 6 * row + col. The helpers work on Python ints, numpy arrays and
jax arrays alike (plain operators only), so the numpy tables below and the
traced rules share one definition. 36 (`OFF_BOARD`) stands for "no cell"
and indexes a padding entry in the tables that need one.
"""

from typing import TypeVar

import jax
import numpy as np

from .constants import NUM_CELLS, N

OFF_BOARD = NUM_CELLS
# Cell indices (or rows, columns) of any kind; a helper returns the kind it is given.
Cells = TypeVar("Cells", int, np.ndarray, jax.Array)


def row(cell: Cells) -> Cells:
    return cell // N


def col(cell: Cells) -> Cells:
    return cell % N


def cell_at(r: Cells, c: Cells) -> Cells:
    return r * N + c


def manhattan(a: Cells, b: Cells) -> Cells:
    """Grid distance |Δrow| + |Δcol| between two cells."""
    return abs(row(a) - row(b)) + abs(col(a) - col(b))


def on_board(r: Cells, c: Cells) -> Cells:
    """Whether (row, col) lies on the board."""
    return (r >= 0) & (r < N) & (c >= 0) & (c < N)


CELLS = np.arange(NUM_CELLS, dtype=np.int32)
CELL_ROW = row(CELLS)
CELL_COL = col(CELLS)
CORNERS = np.array([0, N - 1, NUM_CELLS - N, NUM_CELLS - 1], np.int32)
IS_CORNER = np.isin(CELLS, CORNERS)
# Direction order UP, DOWN, LEFT, RIGHT (action = index).
DIR_DROW = np.array([1, -1, 0, 0], np.int32)
DIR_DCOL = np.array([0, 0, -1, 1], np.int32)


def _neighbour_table() -> np.ndarray:
    """NEIGHBOURS[c, d] = the cell in direction d from c, or OFF_BOARD."""
    r = CELL_ROW[:, None] + DIR_DROW[None, :]
    c = CELL_COL[:, None] + DIR_DCOL[None, :]
    return np.where(on_board(r, c), cell_at(r, c), OFF_BOARD).astype(np.int32)


NEIGHBOURS = _neighbour_table()
# CROSS[c] = [c, up, down, left, right], OFF_BOARD where off the board.
CROSS = np.concatenate([CELLS[:, None], NEIGHBOURS], axis=1)
# RING[c, x]: x is one of the (up to) 8 cells around c.
RING = (
    (np.abs(CELL_ROW[:, None] - CELL_ROW[None, :]) <= 1)
    & (np.abs(CELL_COL[:, None] - CELL_COL[None, :]) <= 1)
    & (CELLS[:, None] != CELLS[None, :])
)
# DISTANCE[a, b] = manhattan(a, b).
DISTANCE = manhattan(CELLS[:, None], CELLS[None, :]).astype(np.int32)
