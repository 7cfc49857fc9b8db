"""Human names for actions, reward components and flat observation entries.

Used only for reports: a divergence is printed as ``grid[2,3,10] (block points)``
rather than ``flat[673]`` (``observation.md`` §3-§5, §8).
"""

from __future__ import annotations

from hackmatrix.names import (
    ACTION_COUNT,
    CELL_FEATURES,
    DIRECTION_NAMES,
    GRID_OFFSET,
    GRID_SIZE,
    OBS_SIZE,
    PLAYER_FEATURES,
    PROGRAM_NAMES,
)

# Reports spell programs in capitals (``SHOW``) so they stand out from directions.
ACTION_NAMES = DIRECTION_NAMES + ("siphon",) + tuple(p.upper() for p in PROGRAM_NAMES)

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
assert len(_CHANNEL_NAMES) == CELL_FEATURES


def action_name(action: int) -> str:
    if 0 <= action < ACTION_COUNT:
        return f"{action} ({ACTION_NAMES[action]})"
    return f"{action} (out of range)"


def channel_name(channel: int) -> str:
    return _CHANNEL_NAMES[channel]


def flat_index_name(index: int) -> str:
    """``player[2] (health)``, ``programs[13] (owns SHOW)`` or ``grid[r,c,ch] (meaning)``."""
    if not 0 <= index < OBS_SIZE:
        raise IndexError(f"flat index {index} is outside 0..{OBS_SIZE - 1}")
    if index < PLAYER_FEATURES:
        return f"player[{index}] ({PLAYER_ENTRY_NAMES[index]})"
    if index < GRID_OFFSET:
        i = index - PLAYER_FEATURES
        return f"programs[{i}] (owns {PROGRAM_NAMES[i].upper()})"
    cell, channel = divmod(index - GRID_OFFSET, CELL_FEATURES)
    row, col = divmod(cell, GRID_SIZE)
    return f"grid[{row},{col},{channel}] ({_CHANNEL_NAMES[channel]})"
