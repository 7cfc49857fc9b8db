"""Typed, path-carrying access to the JSON objects of a `setState` request (protocol.md §6).

Every error is a `ValueError("state.enemies[1].hp: out of range")`: the path
of the offending field, then the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..names import PROGRAM_ALIASES
from .constants import ENEMY_TYPE_NAMES, PROGRAM_NAMES, VALUE_CAP, N
from .grid import cell_at

PLAYER_KEYS = {"row", "col", "hp", "credits", "energy", "dataSiphons", "attackDamage", "score"}
ENEMY_KEYS = {
    "type",
    "row",
    "col",
    "hp",
    "stunned",
    "spawnedFromSiphon",
    "isFromScheduledTask",
    "disabledTurns",
    "lastKnownRow",
    "lastKnownCol",
}
TRANSMISSION_KEYS = {
    "row",
    "col",
    "turnsRemaining",
    "enemyType",
    "isFromScheduledTask",
    "spawnedFromSiphon",
}
BLOCK_KEYS = {
    "row",
    "col",
    "type",
    "siphoned",
    "points",
    "spawnCount",
    "programType",
    "programActionIndex",
    "isData",
}
RESOURCE_KEYS = {"row", "col", "credits", "energy", "dataSiphon"}
FLAG_KEYS = {"row", "col", "siphoned", "siphonCenter"}
SNAPSHOT_KEYS = {
    "player",
    "turn",
    "ownedPrograms",
    "enemies",
    "transmissions",
    "blocks",
    "resources",
    "exit",
    "cellFlags",
    "showActivated",
    "scheduledTasksDisabled",
    "atkPlusUsesThisStage",
}
STATE_KEYS = SNAPSHOT_KEYS | {
    "stage",
    "scheduledTaskInterval",
    "nextScheduledTaskTurn",
    "pendingSiphonTransmissions",
    "stepActive",
    "seed",
    "stepIndex",
    "gameWon",
    "undoHistory",
}


class Reader:
    """Typed access to one JSON object with path-carrying errors."""

    def __init__(self, obj: Any, path: str, allowed: set[str]) -> None:
        if not isinstance(obj, dict):
            raise ValueError(f"{path}: expected an object")
        for key in obj:
            if key not in allowed:
                raise ValueError(f"{path}.{key}: unknown key")
        self.obj, self.path = obj, path

    def has(self, key: str) -> bool:
        return self.obj.get(key) is not None  # absent and null mean the same (protocol.md §3.2)

    def fail(self, key: str, reason: str) -> Any:
        raise ValueError(f"{self.path}.{key}: {reason}")

    def read_int(
        self,
        key: str,
        default: Any = None,
        lo: int = 0,
        hi: int = VALUE_CAP,
        required: bool = False,
    ) -> Any:
        """An integer in [lo, hi] (an integral float is accepted), else `default`."""
        if not self.has(key):
            if required:
                self.fail(key, "missing required field")
            return default
        v = self.obj[key]
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                self.fail(key, "expected an integer")
        if v < lo or v > hi:
            self.fail(key, "out of range")
        return v

    def read_bool(self, key: str, default: Any = False) -> Any:
        if not self.has(key):
            return default
        v = self.obj[key]
        if not isinstance(v, bool):
            self.fail(key, "expected a boolean")
        return v

    def read_str(self, key: str, required: bool = False) -> Any:
        """A string, lower-cased (enum strings match case-insensitively)."""
        if not self.has(key):
            if required:
                self.fail(key, "missing required field")
            return None
        v = self.obj[key]
        if not isinstance(v, str):
            self.fail(key, "expected a string")
        return v.lower()

    def read_list(self, key: str) -> list[Any]:
        v = self.obj.get(key)
        v = [] if v is None else v
        if not isinstance(v, list):
            self.fail(key, "expected a list")
        return v

    def sub(self, key: str, allowed: set[str], required: bool = False) -> Reader | None:
        if not self.has(key):
            if required:
                self.fail(key, "missing required field")
            return None
        return Reader(self.obj[key], f"{self.path}.{key}", allowed)

    def entries(self, key: str, allowed: set[str]) -> Iterator[Reader]:
        """A reader for each object of the list `key`, with its indexed path.

        Lazy: each entry is checked only when the caller reaches it, so the
        first error in list order is the one reported.
        """
        for k, entry in enumerate(self.read_list(key)):
            yield Reader(entry, f"{self.path}.{key}[{k}]", allowed)

    def cell(self) -> int:
        """The cell of this object's `row` and `col` (both required, 0..5)."""
        r = self.read_int("row", lo=0, hi=N - 1, required=True)
        return cell_at(r, self.read_int("col", lo=0, hi=N - 1, required=True))

    def enemy_type(self, key: str) -> int:
        name = self.read_str(key, required=True)
        if name not in ENEMY_TYPE_NAMES:
            self.fail(key, f"unknown enemy type {name!r}")
        return ENEMY_TYPE_NAMES.index(name)

    def program(self, key: str) -> int | None:
        """A program index from its name (or an alias), None when absent."""
        name = self.read_str(key)
        if name is None:
            return None
        name = PROGRAM_ALIASES.get(name, name)
        if name not in PROGRAM_NAMES:
            self.fail(key, f"unknown program {self.obj[key]!r}")
        return PROGRAM_NAMES.index(name)
