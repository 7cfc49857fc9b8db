"""observation.md §11 worked examples A, B, B′, C: every non-zero entry, exact float32 bits."""

import numpy as np

import hackmatrix.jax_env as J

from .helpers import OBSERVE


def flat_of(d):
    return np.asarray(J.flatten_observation(OBSERVE(J.state_from_json(d))))


def f32(num, den=1):
    return np.float32(num / den)


def assert_nonzero_exactly(flat, expected):
    assert flat.shape == (1545,) and flat.dtype == np.float32
    nonzero = {int(i): flat[i] for i in np.nonzero(flat)[0]}
    assert set(nonzero) == set(expected)
    for i, v in expected.items():
        assert nonzero[i].tobytes() == np.float32(v).tobytes(), (i, nonzero[i], v)


EXAMPLE_A = {
    "player": {"row": 0, "col": 0, "hp": 3, "credits": 10},
    "exit": {"row": 5, "col": 5},
    "resources": [
        {"row": 0, "col": 5, "dataSiphon": True, "credits": 1},
        {"row": 5, "col": 0, "dataSiphon": True, "energy": 2},
        {"row": 1, "col": 1, "credits": 2},
        {"row": 2, "col": 2, "energy": 3},
    ],
    "blocks": [
        {"row": 2, "col": 3, "type": "data", "points": 4, "spawnCount": 4},
        {"row": 3, "col": 1, "type": "program", "programType": "warp", "spawnCount": 5},
    ],
    "transmissions": [{"row": 4, "col": 4, "turnsRemaining": 1, "enemyType": "daemon"}],
}


def test_example_a_start_of_stage():
    assert_nonzero_exactly(
        flat_of(EXAMPLE_A),
        {
            2: 1.0,
            3: f32(10, 50),
            280: f32(1, 3),
            282: 1.0,
            364: f32(2, 3),
            659: 1.0,
            670: 1.0,
            673: f32(4, 9),
            698: f32(4, 9),
            839: 1.0,
            846: 1.0,
            866: f32(5, 9),
            1245: 0.25,
            1331: f32(2, 3),
            1332: 1.0,
            1543: 1.0,
        },
    )


EXAMPLE_B = {
    "player": {"row": 2, "col": 2, "hp": 2, "energy": 55, "dataSiphons": 1, "attackDamage": 2},
    "stage": 2,
    "ownedPrograms": [18],
    "exit": {"row": 0, "col": 5},
    "enemies": [
        {"type": "cryptog", "row": 2, "col": 5, "hp": 2},
        {"type": "cryptog", "row": 4, "col": 4, "hp": 1, "lastKnownRow": 4, "lastKnownCol": 3},
        {"type": "virus", "row": 0, "col": 2, "hp": 2, "stunned": True, "spawnedFromSiphon": True},
    ],
    "transmissions": [{"row": 3, "col": 0, "turnsRemaining": 4, "enemyType": "glitch"}],
}
B_ENTRIES = {
    0: f32(2, 5),
    1: f32(2, 5),
    2: f32(2, 3),
    4: 1.0,
    5: f32(1, 7),
    6: f32(1, 10),
    7: 0.5,
    23: 1.0,
    117: 1.0,
    121: f32(2, 3),
    122: 1.0,
    123: 1.0,
    283: 1.0,
    750: 1.0,
    751: f32(2, 3),
    825: 1.0,
}


def test_example_b_hidden_cryptog():
    assert_nonzero_exactly(flat_of(EXAMPLE_B), B_ENTRIES)


def test_example_b_prime_with_show():
    expected = dict(B_ENTRIES)
    expected.update({8: 1.0, 1212: 1.0, 1213: f32(1, 3)})
    assert_nonzero_exactly(flat_of({**EXAMPLE_B, "showActivated": True}), expected)


EXAMPLE_C = {
    "player": {
        "row": 1,
        "col": 1,
        "hp": 2,
        "credits": 3,
        "energy": 60,
        "dataSiphons": 12,
        "attackDamage": 3,
    },
    "stage": 4,
    "ownedPrograms": [8, 26],
    "scheduledTasksDisabled": True,
    "exit": {"row": 5, "col": 5},
    "blocks": [
        {"row": 1, "col": 2, "type": "data", "points": 7, "spawnCount": 0, "siphoned": True},
        {
            "row": 0,
            "col": 1,
            "type": "program",
            "programType": "atk+",
            "spawnCount": 0,
            "siphoned": True,
        },
        {"row": 3, "col": 4, "type": "question", "isData": True, "points": 5},
    ],
    "resources": [{"row": 1, "col": 2, "credits": 2}, {"row": 3, "col": 4, "energy": 1}],
    "cellFlags": [
        {"row": 1, "col": 1, "siphoned": True, "siphonCenter": True},
        {"row": 1, "col": 0, "siphoned": True},
        {"row": 2, "col": 1, "siphoned": True},
    ],
}


def test_example_c_after_siphon_saturated():
    assert_nonzero_exactly(
        flat_of(EXAMPLE_C),
        {
            0: f32(1, 5),
            1: f32(1, 5),
            2: f32(2, 3),
            3: f32(3, 50),
            4: 1.0,
            5: f32(3, 7),
            6: 1.0,
            7: 1.0,
            9: 1.0,
            13: 1.0,
            31: 1.0,
            83: 1.0,
            86: 1.0,
            108: 1.0,
            368: 1.0,
            376: 1.0,
            379: f32(7, 9),
            380: 1.0,
            406: f32(2, 3),
            966: 1.0,
            1543: 1.0,
        },
    )


def test_documented_bit_patterns():
    for value, bits in [
        (f32(1, 3), 0x3EAAAAAB),
        (f32(2, 3), 0x3F2AAAAB),
        (f32(1, 5), 0x3E4CCCCD),
        (f32(4, 9), 0x3EE38E39),
        (f32(5, 9), 0x3F0E38E4),
        (f32(7, 9), 0x3F471C72),
        (f32(1, 7), 0x3E124925),
        (f32(3, 7), 0x3EDB6DB7),
        (f32(3, 50), 0x3D75C28F),
    ]:
        assert int(np.float32(value).view(np.uint32)) == bits


def test_observe_shapes_and_dtypes():
    parts = OBSERVE(J.state_from_json(EXAMPLE_A))
    assert parts["player"].shape == (10,) and parts["player"].dtype == np.float32
    assert parts["programs"].shape == (23,) and parts["programs"].dtype == np.int32
    assert parts["grid"].shape == (6, 6, 42) and parts["grid"].dtype == np.float32


def test_cell_ratios_are_exact_however_xla_divides():
    """The grid divides by 3, 4 and 9 directly: x * f32(1/c) must equal the rounded x / c there."""
    from hackmatrix.jax_env.observation import CELL_DENOMINATORS

    for denom in CELL_DENOMINATORS:
        xs = np.arange(denom + 1, dtype=np.float32)
        exact = np.array([np.float32(k / denom) for k in range(denom + 1)], np.float32)
        np.testing.assert_array_equal(xs / np.float32(denom), exact)
        np.testing.assert_array_equal(xs * (np.float32(1) / np.float32(denom)), exact)
    # ...which does not hold for the player's 7: that one keeps its lookup table.
    assert np.float32(3) * (np.float32(1) / np.float32(7)) != np.float32(3 / 7)
