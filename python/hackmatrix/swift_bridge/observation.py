"""Reference observation encoder: JSON observation -> numeric arrays.

Implements ``observation.md`` §9 (the encoder), §8 (the flat 1545-vector) and
``protocol.md`` §9.2 (the observation digest). Numpy only.

Every quotient is computed as a float64 division and stored once into a
float32 array, which rounds to the nearest float32 (``observation.md`` §1),
then saturated into [0, 1].
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import numpy as np

from hackmatrix.names import (
    CELL_FEATURES,
    ENEMY_TYPES,
    FIRST_PROGRAM_ACTION,
    GRID_SIZE,
    OBS_SIZE,
    PLAYER_FEATURES,
    PROGRAM_FEATURES,
)

ENEMY_CHANNEL = {name: channel for channel, name in enumerate(ENEMY_TYPES)}  # channels 0..3
BLOCK_CHANNEL = {"data": 7, "program": 8, "question": 9}
PROGRAM_CHANNEL_OFFSET = 7  # action a (5..27) -> channel a + 7 (12..34)


def _sat(x: float) -> float:
    return 1.0 if x > 1.0 else (0.0 if x < 0.0 else x)


def _lookup(table: Mapping[str, int], name: str, what: str) -> int:
    try:
        return table[name.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"unknown {what} {name!r}; expected one of {sorted(table)}") from None


def _program_slot(action: int, where: str) -> int:
    slot = int(action) - FIRST_PROGRAM_ACTION
    if not 0 <= slot < PROGRAM_FEATURES:
        raise ValueError(f"{where}: program action index {action} is outside 5..27")
    return slot


def encode_observation(obs: Mapping) -> dict[str, np.ndarray]:
    """Encode a JSON observation (``protocol.md`` §4) into player / programs / grid arrays."""
    player = np.zeros(PLAYER_FEATURES, dtype=np.float32)
    player[0] = _sat(obs["playerRow"] / 5)
    player[1] = _sat(obs["playerCol"] / 5)
    player[2] = _sat(obs["playerHP"] / 3)
    player[3] = _sat(obs["credits"] / 50)
    player[4] = _sat(obs["energy"] / 50)
    player[5] = _sat((obs["stage"] - 1) / 7)
    player[6] = _sat(obs["dataSiphons"] / 10)
    player[7] = _sat((obs["baseAttack"] - 1) / 2)
    player[8] = 1.0 if obs["showActivated"] else 0.0
    player[9] = 1.0 if obs["scheduledTasksDisabled"] else 0.0

    programs = np.zeros(PROGRAM_FEATURES, dtype=np.int32)
    for action in obs["ownedPrograms"]:
        programs[_program_slot(action, "ownedPrograms")] = 1

    grid = np.zeros((GRID_SIZE, GRID_SIZE, CELL_FEATURES), dtype=np.float32)
    rows = obs["cells"]
    if len(rows) != GRID_SIZE or any(len(row) != GRID_SIZE for row in rows):
        raise ValueError("observation.cells must be 6 rows of 6 cells")
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            x = grid[r, c]
            enemy = cell.get("enemy")
            if enemy is not None:
                x[_lookup(ENEMY_CHANNEL, enemy["type"], "enemy type")] = 1.0
                x[4] = _sat(enemy["hp"] / 3)
                x[5] = 1.0 if enemy["isStunned"] else 0.0
                x[6] = 1.0 if enemy["spawnedFromSiphon"] else 0.0
            block = cell.get("block")
            if block is not None:
                x[_lookup(BLOCK_CHANNEL, block["blockType"], "block type")] = 1.0
                if "points" in block:
                    x[10] = _sat(block["points"] / 9)
                x[11] = 1.0 if block["isSiphoned"] else 0.0
                if "programActionIndex" in block:
                    action = block["programActionIndex"]
                    x[_program_slot(action, f"cells[{r}][{c}].block") + 12] = 1.0
                if "transmissionSpawnCount" in block:
                    x[35] = _sat(block["transmissionSpawnCount"] / 9)
            transmission = cell.get("transmission")
            if transmission is not None:
                x[36] = _sat(transmission["turnsUntilSpawn"] / 4)
            if "credits" in cell:
                x[37] = _sat(cell["credits"] / 3)
            if "energy" in cell:
                x[38] = _sat(cell["energy"] / 3)
            if cell["isDataSiphon"]:
                x[39] = 1.0
            if cell["isExit"]:
                x[40] = 1.0
            if cell["siphonCenter"]:
                x[41] = 1.0
    return {"player": player, "programs": programs, "grid": grid}


def flatten_observation(parts: Mapping[str, np.ndarray]) -> np.ndarray:
    """``player ‖ float32(programs) ‖ grid`` (row-major) as f32[1545] (``observation.md`` §8)."""
    flat = np.empty(OBS_SIZE, dtype=np.float32)
    flat[:PLAYER_FEATURES] = parts["player"]
    flat[PLAYER_FEATURES : PLAYER_FEATURES + PROGRAM_FEATURES] = parts["programs"]
    flat[PLAYER_FEATURES + PROGRAM_FEATURES :] = np.asarray(parts["grid"]).reshape(-1)
    return flat


def encode_flat(obs: Mapping) -> np.ndarray:
    """JSON observation straight to the flat f32[1545] vector."""
    return flatten_observation(encode_observation(obs))


def obs_digest(observation: np.ndarray | Mapping) -> str:
    """``"sha256:" + hex`` of the flat vector as little-endian float32, -0.0 written as +0.0.

    Accepts a flat vector, a dict of the three parts, or a JSON observation.
    """
    if isinstance(observation, Mapping):
        if "cells" in observation:
            observation = encode_observation(observation)
        flat = flatten_observation(observation)
    else:
        flat = np.asarray(observation, dtype=np.float32).reshape(-1)
    if flat.shape != (OBS_SIZE,):
        raise ValueError(f"a flat observation has {OBS_SIZE} values, got {flat.size}")
    little_endian = np.where(flat == 0.0, np.float32(0.0), flat).astype("<f4", copy=False)
    return "sha256:" + hashlib.sha256(little_endian.tobytes()).hexdigest()
