"""Names of actions, programs and enemies, as the protocol spells them.

Kept here (and not imported from an engine) so that rendering works with
nothing but numpy and Pillow installed.
"""

from __future__ import annotations

GRID_SIZE = 6
ACTION_COUNT = 28
FIRST_PROGRAM_ACTION = 5

DIRECTION_NAMES = ("up", "down", "left", "right")

# Program names in action order 5..27 (protocol.md §4.2).
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

ACTION_NAMES = DIRECTION_NAMES + ("siphon",) + PROGRAM_NAMES

# (credits, energy) each program costs, in action order 5..27 (game-rules.md §1.6).
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

ENEMY_TYPES = ("virus", "daemon", "glitch", "cryptog")
ENEMY_MAX_HP = {"virus": 2, "daemon": 3, "glitch": 2, "cryptog": 2}

# The 15 reward components in canonical order (rewards.md §1).
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

# Spellings setState accepts besides the canonical names (protocol.md §6.4).
_PROGRAM_ALIASES = {
    "siphplus": "siph+",
    "siph_plus": "siph+",
    "dbom": "d_bom",
    "d_bomb": "d_bom",
    "antiv": "anti-v",
    "anti_v": "anti-v",
    "atkplus": "atk+",
    "atk_plus": "atk+",
}


def action_name(action: int) -> str:
    if not 0 <= action < ACTION_COUNT:
        raise ValueError(f"action {action} is outside 0..{ACTION_COUNT - 1}")
    return ACTION_NAMES[action]


def program_name_of_block(block: dict) -> str | None:
    """The canonical program name a program-bearing block holds, or None."""
    index = block.get("programActionIndex")
    if index is not None:
        return action_name(int(index))
    name = block.get("programType")
    if name is None:
        return None
    name = str(name).lower()
    return _PROGRAM_ALIASES.get(name, name)
