"""Human names for actions, reward components and flat observation entries.

Used only for reports: a divergence is printed as ``grid[2,3,10] (block points)``
rather than ``flat[673]`` (``observation.md`` §3-§5, §8).
"""

from __future__ import annotations

ACTION_COUNT = 28
FLAT_SIZE = 1545
GRID_OFFSET = 33
CHANNELS = 42

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

ACTION_NAMES = ("up", "down", "left", "right", "siphon") + tuple(p.upper() for p in PROGRAM_NAMES)

ENEMY_TYPES = ("virus", "daemon", "glitch", "cryptog")

PLAYER_ENTRY_NAMES = (
    "row",
    "column",
    "health",
    "credits",
    "energy",
    "stage",
    "data siphons held",
    "attack damage",
    "SHOW active",
    "CALM active",
)

_CHANNEL_NAMES = (
    [
        "enemy is a virus",
        "enemy is a daemon",
        "enemy is a glitch",
        "enemy is a cryptog",
        "enemy hit points",
        "enemy stunned",
        "enemy came from a siphon",
        "block is a data block",
        "block is a program block",
        "block is a question block",
        "block points",
        "block already siphoned",
    ]
    + [f"block holds program {p.upper()}" for p in PROGRAM_NAMES]
    + [
        "block spawn count",
        "transmission countdown",
        "credits on the cell",
        "energy on the cell",
        "data-siphon pickup",
        "exit",
        "siphon centre",
    ]
)
assert len(_CHANNEL_NAMES) == CHANNELS


def action_name(action: int) -> str:
    if 0 <= action < ACTION_COUNT:
        return f"{action} ({ACTION_NAMES[action]})"
    return f"{action} (out of range)"


def channel_name(channel: int) -> str:
    return _CHANNEL_NAMES[channel]


def flat_index_name(index: int) -> str:
    """``player[2] (health)``, ``programs[13] (owns SHOW)`` or ``grid[r,c,ch] (meaning)``."""
    if not 0 <= index < FLAT_SIZE:
        raise IndexError(f"flat index {index} is outside 0..{FLAT_SIZE - 1}")
    if index < 10:
        return f"player[{index}] ({PLAYER_ENTRY_NAMES[index]})"
    if index < GRID_OFFSET:
        i = index - 10
        return f"programs[{i}] (owns {PROGRAM_NAMES[i].upper()})"
    cell, channel = divmod(index - GRID_OFFSET, CHANNELS)
    row, col = divmod(cell, 6)
    return f"grid[{row},{col},{channel}] ({_CHANNEL_NAMES[channel]})"
