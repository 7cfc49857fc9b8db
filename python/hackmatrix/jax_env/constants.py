"""Game constants of game-rules.md §0 and §1, as plain Python values and numpy tables."""

import numpy as np

N = 6
NUM_CELLS = 36
MAX_HP = 3
LAST_STAGE = 8
MIN_INTERVAL = 4
SIPHON_DELAY = 5
DELAY_TURNS = 3
ATK_PLUS_PER_STAGE = 2
BLOCK_ATTEMPTS = 100
MAX_OCCUPANTS = 35
UNDO_DEPTH = 4
NUM_ACTIONS = 28
NUM_PROGRAMS = 23
VALUE_CAP = 1_000_000  # protocol.md §6.1: upper bound of unbounded integer fields

# Cell content.
EMPTY, BLOCK, DATA_SIPHON, EXIT = 0, 1, 2, 3
# Block kinds.
KIND_DATA, KIND_PROGRAM, KIND_QUESTION = 0, 1, 2
# Enemy types, canonical order.
VIRUS, DAEMON, GLITCH, CRYPTOG = 0, 1, 2, 3
ENEMY_TYPE_NAMES = ("virus", "daemon", "glitch", "cryptog")
ENEMY_MAX_HP = np.array([2, 3, 2, 2], np.int32)
# Outcome.
RUNNING, DIED, WON = 0, 1, 2

# Programs: index p, action 5 + p.
PROGRAM_NAMES = (
    "push",
    "pull",
    "crash",
    "warp",
    "poly",
    "wait",
    "debug",
    "row",
    "col",
    "undo",
    "step",
    "siph+",
    "exch",
    "show",
    "reset",
    "calm",
    "d_bom",
    "delay",
    "anti-v",
    "score",
    "reduc",
    "atk+",
    "hack",
)
(
    PUSH,
    PULL,
    CRASH,
    WARP,
    POLY,
    WAIT,
    DEBUG,
    ROW,
    COL,
    UNDO,
    STEP,
    SIPH_PLUS,
    EXCH,
    SHOW,
    RESET,
    CALM,
    D_BOM,
    DELAY,
    ANTI_V,
    SCORE,
    REDUC,
    ATK_PLUS,
    HACK,
) = range(23)
PROGRAM_CREDITS = np.array(
    [0, 0, 3, 2, 1, 0, 3, 3, 3, 1, 0, 5, 4, 2, 0, 2, 3, 1, 3, 0, 2, 4, 2], np.int32
)
PROGRAM_ENERGY = np.array(
    [2, 2, 2, 2, 1, 1, 0, 1, 1, 0, 3, 0, 0, 0, 4, 4, 0, 2, 0, 5, 1, 4, 2], np.int32
)
SPAWN_COST = np.array(
    [4, 4, 6, 5, 3, 1, 4, 2, 2, 3, 4, 7, 3, 2, 2, 6, 4, 4, 4, 5, 3, 8, 4], np.int32
)

# Direction order UP, DOWN, LEFT, RIGHT (action = index).
DIR_DROW = np.array([1, -1, 0, 0], np.int32)
DIR_DCOL = np.array([0, 0, -1, 1], np.int32)
CORNERS = np.array([0, 5, 30, 35], np.int32)

# Random draw sites (game-rules.md §15).
SITE_START_CORNER = 1
SITE_START_BONUS = 2
SITE_EXIT_CORNER = 3
SITE_BLOCK_COUNT = 4
SITE_BLOCK_CELLS = 5
SITE_BLOCK_IS_DATA = 6
SITE_BLOCK_IS_QUESTION = 7
SITE_BLOCK_POINTS = 8
SITE_BLOCK_PROGRAM_RANK = 9
SITE_RESOURCE_AMOUNT = 10
SITE_RESOURCE_KIND = 11
SITE_STAGE_TX_CELL = 12
SITE_STAGE_TX_TYPE = 13
SITE_SCHED_TX_CELL = 14
SITE_SCHED_TX_TYPE = 15
SITE_SIPHON_TX_CELL = 16
SITE_SIPHON_TX_TYPE = 17
SITE_ENEMY_ORDER_A = 18
SITE_ENEMY_ORDER_B = 19
SITE_POLY_TYPE = 20
SITE_WARP_TARGET = 21

# Rewards (rewards.md §1).
STAGE_TABLE = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 100.0)
REWARD_COMPONENT_NAMES = (
    "step_penalty",
    "stage_completion",
    "score_gain",
    "kills",
    "data_siphon",
    "distance_shaping",
    "victory",
    "death_penalty",
    "resource_gain",
    "resource_holding",
    "damage_penalty",
    "hp_recovery",
    "siphon_quality",
    "program_waste",
    "siphon_death_penalty",
)


def _neighbour_table() -> np.ndarray:
    """NEIGHBOURS[c, d] = cell in direction d from c, or 36 (a padding index) when out of bounds."""
    table = np.full((NUM_CELLS, 4), NUM_CELLS, np.int32)
    for c in range(NUM_CELLS):
        r, col = divmod(c, N)
        for d in range(4):
            rr, cc = r + DIR_DROW[d], col + DIR_DCOL[d]
            if 0 <= rr < N and 0 <= cc < N:
                table[c, d] = rr * N + cc
    return table


def _ring_table() -> np.ndarray:
    """RING[c, x] = True when cell x is in the 8-cell ring of cell c."""
    ring = np.zeros((NUM_CELLS, NUM_CELLS), bool)
    for c in range(NUM_CELLS):
        r, col = divmod(c, N)
        for x in range(NUM_CELLS):
            rr, cc = divmod(x, N)
            ring[c, x] = x != c and abs(rr - r) <= 1 and abs(cc - col) <= 1
    return ring


NEIGHBOURS = _neighbour_table()
RING = _ring_table()
CELL_ROW = np.arange(NUM_CELLS, dtype=np.int32) // N
CELL_COL = np.arange(NUM_CELLS, dtype=np.int32) % N
# CROSS[c] = [c, up, down, left, right] with 36 for out of bounds.
CROSS = np.concatenate([np.arange(NUM_CELLS, dtype=np.int32)[:, None], NEIGHBOURS], axis=1)
