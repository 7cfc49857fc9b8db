"""The reference encoder against the worked examples of observation.md §11.

The JSON observations are written by hand from each example's state, applying
the visibility rules of observation.md §5.2 the way the CLI does. Expected
values are exact float32 bit patterns.
"""

import hashlib
import struct

import numpy as np
import pytest

from hackmatrix.names import OBS_SIZE
from hackmatrix.swift_bridge.observation import (
    encode_flat,
    encode_observation,
    flatten_observation,
    obs_digest,
)

THIRD = 0x3EAAAAAB
TWO_THIRDS = 0x3F2AAAAB
FIFTH = 0x3E4CCCCD
FOUR_NINTHS = 0x3EE38E39
FIVE_NINTHS = 0x3F0E38E4
SEVEN_NINTHS = 0x3F471C72
SEVENTH = 0x3E124925
THREE_SEVENTHS = 0x3EDB6DB7
SIX_HUNDREDTHS = 0x3D75C28F
ONE = 0x3F800000
QUARTER = 0x3E800000
HALF = 0x3F000000
TENTH = 0x3DCCCCCD
TWO_FIFTHS = 0x3ECCCCCD


def bits(value) -> int:
    return struct.unpack("<I", struct.pack("<f", float(value)))[0]


def empty_cells():
    return [
        [
            {"row": r, "col": c, "isDataSiphon": False, "isExit": False, "siphonCenter": False}
            for c in range(6)
        ]
        for r in range(6)
    ]


def observation(**fields):
    obs = {
        "playerRow": 0,
        "playerCol": 0,
        "playerHP": 3,
        "credits": 0,
        "energy": 0,
        "stage": 1,
        "turn": 0,
        "dataSiphons": 0,
        "baseAttack": 1,
        "score": 0,
        "showActivated": False,
        "scheduledTasksDisabled": False,
        "ownedPrograms": [],
        "cells": empty_cells(),
        "cryptogHints": [],
    }
    obs.update(fields)
    return obs


def example_a():
    obs = observation(playerRow=0, playerCol=0, playerHP=3, credits=10)
    cells = obs["cells"]
    cells[5][5]["isExit"] = True
    cells[0][5].update(isDataSiphon=True, credits=1)
    cells[5][0].update(isDataSiphon=True, energy=2)
    cells[2][3]["block"] = {
        "blockType": "data",
        "isSiphoned": False,
        "points": 4,
        "transmissionSpawnCount": 4,
    }
    cells[3][1]["block"] = {
        "blockType": "program",
        "isSiphoned": False,
        "points": 0,
        "programType": "warp",
        "programActionIndex": 8,
        "transmissionSpawnCount": 5,
    }
    cells[4][4]["transmission"] = {"turnsUntilSpawn": 1}
    cells[1][1]["credits"] = 2
    cells[2][2]["energy"] = 3
    return obs


EXPECTED_A = {
    2: ONE,
    3: FIFTH,
    280: THIRD,
    282: ONE,
    364: TWO_THIRDS,
    659: ONE,
    670: ONE,
    673: FOUR_NINTHS,
    698: FOUR_NINTHS,
    839: ONE,
    846: ONE,
    866: FIVE_NINTHS,
    1245: QUARTER,
    1331: TWO_THIRDS,
    1332: ONE,
    1543: ONE,
}


def example_b(show: bool):
    obs = observation(
        playerRow=2,
        playerCol=2,
        playerHP=2,
        credits=0,
        energy=55,
        dataSiphons=1,
        baseAttack=2,
        stage=2,
        ownedPrograms=[18],
        showActivated=show,
    )
    cells = obs["cells"]
    cells[0][5]["isExit"] = True
    cells[2][5]["enemy"] = {
        "type": "cryptog",
        "hp": 2,
        "isStunned": False,
        "spawnedFromSiphon": False,
    }
    if show:  # the cryptog at (4,4) is only visible while SHOW is active
        cells[4][4]["enemy"] = {
            "type": "cryptog",
            "hp": 1,
            "isStunned": False,
            "spawnedFromSiphon": False,
        }
        cells[3][0]["transmission"] = {"turnsUntilSpawn": 4, "enemyType": "glitch"}
    else:
        cells[3][0]["transmission"] = {"turnsUntilSpawn": 4}
        obs["cryptogHints"] = [{"row": 4, "col": 3}]
    cells[0][2]["enemy"] = {"type": "virus", "hp": 2, "isStunned": True, "spawnedFromSiphon": True}
    return obs


EXPECTED_B = {
    0: TWO_FIFTHS,
    1: TWO_FIFTHS,
    2: TWO_THIRDS,
    4: ONE,
    5: SEVENTH,
    6: TENTH,
    7: HALF,
    23: ONE,
    117: ONE,
    121: TWO_THIRDS,
    122: ONE,
    123: ONE,
    283: ONE,
    750: ONE,
    751: TWO_THIRDS,
    825: ONE,
}
EXPECTED_B_SHOW = {**EXPECTED_B, 8: ONE, 1212: ONE, 1213: THIRD}


def example_c():
    obs = observation(
        playerRow=1,
        playerCol=1,
        playerHP=2,
        credits=3,
        energy=60,
        dataSiphons=12,
        baseAttack=3,
        stage=4,
        ownedPrograms=[8, 26],
        scheduledTasksDisabled=True,
    )
    cells = obs["cells"]
    cells[5][5]["isExit"] = True
    cells[1][2]["block"] = {
        "blockType": "data",
        "isSiphoned": True,
        "points": 7,
        "transmissionSpawnCount": 0,
    }
    cells[1][2]["credits"] = 2  # visible: the block is siphoned
    cells[0][1]["block"] = {
        "blockType": "program",
        "isSiphoned": True,
        "points": 0,
        "programType": "atk+",
        "programActionIndex": 26,
        "transmissionSpawnCount": 0,
    }
    # question block: contents and the energy under it are hidden by the CLI
    cells[3][4]["block"] = {"blockType": "question", "isSiphoned": False}
    cells[1][1]["siphonCenter"] = True
    return obs


EXPECTED_C = {
    0: FIFTH,
    1: FIFTH,
    2: TWO_THIRDS,
    3: SIX_HUNDREDTHS,
    4: ONE,
    5: THREE_SEVENTHS,
    6: ONE,
    7: ONE,
    9: ONE,
    13: ONE,
    31: ONE,
    83: ONE,
    86: ONE,
    108: ONE,
    368: ONE,
    376: ONE,
    379: SEVEN_NINTHS,
    380: ONE,
    406: TWO_THIRDS,
    966: ONE,
    1543: ONE,
}


@pytest.mark.parametrize(
    "obs, expected",
    [
        (example_a(), EXPECTED_A),
        (example_b(False), EXPECTED_B),
        (example_b(True), EXPECTED_B_SHOW),
        (example_c(), EXPECTED_C),
    ],
    ids=["A", "B", "B-show", "C"],
)
def test_worked_examples_exact_bits(obs, expected):
    flat = encode_flat(obs)
    assert flat.dtype == np.float32 and flat.shape == (OBS_SIZE,)
    nonzero = {int(i): bits(flat[i]) for i in np.flatnonzero(flat)}
    assert nonzero == expected


def test_parts_shapes_dtypes_and_flat_layout():
    parts = encode_observation(example_c())
    assert parts["player"].shape == (10,) and parts["player"].dtype == np.float32
    assert parts["programs"].shape == (23,) and parts["programs"].dtype == np.int32
    assert parts["grid"].shape == (6, 6, 42) and parts["grid"].dtype == np.float32
    flat = flatten_observation(parts)
    assert np.array_equal(flat[:10], parts["player"])
    assert np.array_equal(flat[10:33], parts["programs"].astype(np.float32))
    for r, c, ch in [(1, 2, 10), (0, 1, 33), (5, 5, 40)]:
        assert flat[33 + 42 * (6 * r + c) + ch] == parts["grid"][r, c, ch]


def test_saturation_keeps_values_in_unit_interval():
    obs = observation(credits=500, energy=51, dataSiphons=99, baseAttack=9)
    cell = obs["cells"][2][2]
    cell["block"] = {
        "blockType": "data",
        "isSiphoned": True,
        "points": 30,
        "transmissionSpawnCount": 12,
    }
    cell["credits"] = 7
    obs["cells"][3][3]["transmission"] = {"turnsUntilSpawn": 7}
    flat = encode_flat(obs)
    assert flat.min() >= 0.0 and flat.max() <= 1.0
    grid = encode_observation(obs)["grid"]
    assert (
        grid[2, 2, 10] == 1.0
        and grid[2, 2, 35] == 1.0
        and grid[2, 2, 37] == 1.0
        and grid[3, 3, 36] == 1.0
    )


def test_digest_is_sha256_of_little_endian_float32():
    flat = encode_flat(example_a())
    expected = "sha256:" + hashlib.sha256(flat.astype("<f4").tobytes()).hexdigest()
    assert obs_digest(flat) == expected
    assert obs_digest(encode_observation(example_a())) == expected
    assert obs_digest(example_a()) == expected
    assert obs_digest(encode_flat(example_b(False))) != expected


def test_digest_writes_negative_zero_as_positive_zero():
    flat = encode_flat(example_a())
    negative = flat.copy()
    negative[flat == 0] = -0.0
    assert np.signbit(negative).any()
    assert obs_digest(negative) == obs_digest(flat)


def test_bad_input_is_rejected_clearly():
    obs = example_a()
    obs["ownedPrograms"] = [3]
    with pytest.raises(ValueError, match="outside 5..27"):
        encode_observation(obs)
    obs = example_a()
    obs["cells"][0][0]["enemy"] = {
        "type": "dragon",
        "hp": 1,
        "isStunned": False,
        "spawnedFromSiphon": False,
    }
    with pytest.raises(ValueError, match="unknown enemy type 'dragon'"):
        encode_observation(obs)
    obs = example_a()
    obs["cells"].pop()
    with pytest.raises(ValueError, match="6 rows of 6 cells"):
        encode_observation(obs)
    with pytest.raises(ValueError, match="1545"):
        obs_digest(np.zeros(10, dtype=np.float32))
