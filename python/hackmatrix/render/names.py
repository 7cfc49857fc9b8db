"""Render-only name helpers on top of :mod:`hackmatrix.names` (the one home of the game's names).

The renderer reads the JSON state (``protocol.md`` §6), which spells enemies
and programs by name, so it looks them up by name here.
"""

from __future__ import annotations

from hackmatrix.names import ENEMY_MAX_HP as _MAX_HP_BY_TYPE
from hackmatrix.names import ENEMY_TYPES, PROGRAM_ALIASES, action_name

ENEMY_MAX_HP = dict(zip(ENEMY_TYPES, _MAX_HP_BY_TYPE))  # {"virus": 2, ...}


def program_name_of_block(block: dict) -> str | None:
    """The canonical program name a program-bearing block holds, or None."""
    index = block.get("programActionIndex")
    if index is not None:
        return action_name(int(index))
    name = block.get("programType")
    if name is None:
        return None
    name = str(name).lower()
    return PROGRAM_ALIASES.get(name, name)
