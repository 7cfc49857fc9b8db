"""The game's names and sizes, written once.

Every other module (both engines' Python sides, the renderer, the Gym env,
the parity harness, the networks and the viewers) imports them from here.
Plain Python only, so importing it costs nothing on any machine. The Swift
engine spells the same names in its `hello` reply; a test checks they agree.

Sources: `game-rules.md` §1 (programs, costs, enemies), `protocol.md` §4
(action order), `observation.md` §3-§8 (sizes), `rewards.md` §1 (components).
"""

from __future__ import annotations

from enum import IntEnum

GRID_SIZE = 6
NUM_CELLS = GRID_SIZE * GRID_SIZE
# Enemies + transmissions at once: one per cell, never the player's (game-rules.md §0).
MAX_OCCUPANTS = NUM_CELLS - 1

# ---- actions (protocol.md §4): 4 directions, siphon, then the 23 programs ----
DIRECTION_NAMES = ("up", "down", "left", "right")
SIPHON_ACTION = 4
FIRST_PROGRAM_ACTION = 5

# Program names in program order; program p is action FIRST_PROGRAM_ACTION + p.
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
NUM_PROGRAMS = len(PROGRAM_NAMES)
ACTION_NAMES = DIRECTION_NAMES + ("siphon",) + PROGRAM_NAMES
ACTION_COUNT = len(ACTION_NAMES)


class Program(IntEnum):
    """Program index p (0..22); its action is `FIRST_PROGRAM_ACTION + p`."""

    PUSH = 0
    PULL = 1
    CRASH = 2
    WARP = 3
    POLY = 4
    WAIT = 5
    DEBUG = 6
    ROW = 7
    COL = 8
    UNDO = 9
    STEP = 10
    SIPH_PLUS = 11
    EXCH = 12
    SHOW = 13
    RESET = 14
    CALM = 15
    D_BOM = 16
    DELAY = 17
    ANTI_V = 18
    SCORE = 19
    REDUC = 20
    ATK_PLUS = 21
    HACK = 22

    @property
    def action(self) -> int:
        return FIRST_PROGRAM_ACTION + int(self)

    @property
    def spelling(self) -> str:
        """The protocol's name, e.g. `siph+` for SIPH_PLUS."""
        return PROGRAM_NAMES[self]


# Other spellings of program names that setState accepts (protocol.md §6.4), lower case.
PROGRAM_ALIASES = {
    "siphplus": "siph+",
    "siph_plus": "siph+",
    "dbom": "d_bom",
    "d_bomb": "d_bom",
    "antiv": "anti-v",
    "anti_v": "anti-v",
    "atkplus": "atk+",
    "atk_plus": "atk+",
}

# (credits, energy) each program costs, in program order (game-rules.md §1.6).
PROGRAM_COSTS = (
    (0, 2),
    (0, 2),
    (3, 2),
    (2, 2),
    (1, 1),
    (0, 1),
    (3, 0),
    (3, 1),
    (3, 1),
    (1, 0),
    (0, 3),
    (5, 0),
    (4, 0),
    (2, 0),
    (0, 4),
    (2, 4),
    (3, 0),
    (1, 2),
    (3, 0),
    (0, 5),
    (2, 1),
    (4, 4),
    (2, 2),
)

# How many transmissions siphoning a fresh block holding each program queues, in program
# order (game-rules.md §1.6 "spawn cost"; a data block queues as many as its points).
PROGRAM_SPAWN_COSTS = (4, 4, 6, 5, 3, 1, 4, 2, 2, 3, 4, 7, 3, 2, 2, 6, 4, 4, 4, 5, 3, 8, 4)

# ---- enemies and outcomes (game-rules.md §1) ----
ENEMY_TYPES = ("virus", "daemon", "glitch", "cryptog")


class EnemyType(IntEnum):
    VIRUS = 0
    DAEMON = 1
    GLITCH = 2
    CRYPTOG = 3


ENEMY_MAX_HP = (2, 3, 2, 2)  # by EnemyType


class Outcome(IntEnum):
    RUNNING = 0
    DIED = 1
    WON = 2


# ---- the observation (observation.md §3-§8) ----
PLAYER_FEATURES = 10
# Player feature 6 is the data siphons held, as sat(dataSiphons / 10) (observation.md §4).
PLAYER_SIPHONS_FEATURE = 6
PLAYER_SIPHONS_SCALE = 10
PROGRAM_FEATURES = NUM_PROGRAMS
CELL_FEATURES = 42
GRID_OFFSET = PLAYER_FEATURES + PROGRAM_FEATURES  # where the grid starts in the flat vector
OBS_SIZE = GRID_OFFSET + NUM_CELLS * CELL_FEATURES  # 1545

# ---- rewards (rewards.md §1), canonical order = the order of the sum ----
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
NUM_REWARD_COMPONENTS = len(REWARD_COMPONENT_NAMES)
STAGE_TABLE = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 100.0)
LAST_STAGE = len(STAGE_TABLE)


def action_name(action: int) -> str:
    """The protocol's name of an action index; a clear error outside 0..27."""
    if not 0 <= action < ACTION_COUNT:
        raise ValueError(f"action {action} is outside 0..{ACTION_COUNT - 1}")
    return ACTION_NAMES[action]
