"""Game constants of game-rules.md §0 and §1, as plain Python values and numpy tables.

Names and sizes shared with the rest of the project (programs, enemies,
outcomes, reward components, the stage table) come from `hackmatrix.names`;
this module adds only what the JAX engine alone needs, as numpy tables.
"""

import numpy as np

from ..names import (
    ACTION_COUNT,
    ENEMY_TYPES,
    FIRST_PROGRAM_ACTION,
    GRID_SIZE,
    LAST_STAGE,
    MAX_OCCUPANTS,
    NUM_CELLS,
    NUM_PROGRAMS,
    OBS_SIZE,
    PROGRAM_COSTS,
    PROGRAM_NAMES,
    PROGRAM_SPAWN_COSTS,
    REWARD_COMPONENT_NAMES,
    SIPHON_ACTION,
    STAGE_TABLE,
    EnemyType,
    Outcome,
    Program,
)
from ..names import (
    ENEMY_MAX_HP as _ENEMY_MAX_HP,
)

# Re-exported from names.py: the rules import every game constant from here.
__all__ = [
    "FIRST_PROGRAM_ACTION",
    "LAST_STAGE",
    "MAX_OCCUPANTS",
    "NUM_CELLS",
    "NUM_PROGRAMS",
    "OBS_SIZE",
    "PROGRAM_NAMES",
    "REWARD_COMPONENT_NAMES",
    "SIPHON_ACTION",
    "STAGE_TABLE",
]

N = GRID_SIZE
MAX_HP = 3
MIN_INTERVAL = 4
SIPHON_DELAY = 5
DELAY_TURNS = 3
ATK_PLUS_PER_STAGE = 2
BLOCK_ATTEMPTS = 100
UNDO_DEPTH = 4
NUM_ACTIONS = ACTION_COUNT
VALUE_CAP = 1_000_000  # protocol.md §6.1: upper bound of unbounded integer fields

# Cell content.
EMPTY, BLOCK, DATA_SIPHON, EXIT = 0, 1, 2, 3
# Block kinds.
KIND_DATA, KIND_PROGRAM, KIND_QUESTION = 0, 1, 2
# Enemy types, canonical order.
VIRUS, DAEMON, GLITCH, CRYPTOG = (int(t) for t in EnemyType)
ENEMY_TYPE_NAMES = ENEMY_TYPES
ENEMY_MAX_HP = np.array(_ENEMY_MAX_HP, np.int32)
# Outcome.
RUNNING, DIED, WON = (int(o) for o in Outcome)

# Programs: index p, action 5 + p.
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
) = (int(p) for p in Program)
PROGRAM_CREDITS = np.array([credits for credits, _ in PROGRAM_COSTS], np.int32)
PROGRAM_ENERGY = np.array([energy for _, energy in PROGRAM_COSTS], np.int32)
# Spawn count of a program block (game-rules.md §10.3), in program order.
SPAWN_COST = np.array(PROGRAM_SPAWN_COSTS, np.int32)

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
