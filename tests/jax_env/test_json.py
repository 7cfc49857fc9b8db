"""state_to_json / state_from_json: canonical form, round trips, defaults, validation errors."""

import copy

import jax
import numpy as np
import pytest

import hackmatrix.jax_env as J

from .helpers import MASK, OBSERVE, RESET_FROM_SEED, STEP, reset_json

PROTOCOL_EXAMPLE = {
    "player": {"row": 2, "col": 2, "hp": 2, "credits": 4, "energy": 3, "dataSiphons": 1},
    "enemies": [
        {"type": "cryptog", "row": 4, "col": 4, "hp": 1},
        {"type": "virus", "row": 0, "col": 2, "hp": 2, "stunned": True, "spawnedFromSiphon": True},
    ],
    "transmissions": [{"row": 3, "col": 0, "turnsRemaining": 2, "enemyType": "glitch"}],
    "blocks": [
        {"row": 2, "col": 3, "type": "data", "points": 3},
        {"row": 1, "col": 1, "type": "program", "programType": "crash", "spawnCount": 6},
        {"row": 4, "col": 1, "type": "question", "isData": False, "programActionIndex": 26},
    ],
    "resources": [
        {"row": 0, "col": 5, "dataSiphon": True, "credits": 1},
        {"row": 1, "col": 2, "energy": 2},
    ],
    "ownedPrograms": [10, 18],
    "stage": 3,
    "turn": 4,
    "exit": {"row": 5, "col": 0},
    "seed": 7,
    "stepIndex": 12,
}


def test_protocol_example_defaults_and_canonical_form():
    d = J.state_to_json(J.state_from_json(PROTOCOL_EXAMPLE))
    assert list(d) == [
        "player",
        "enemies",
        "transmissions",
        "blocks",
        "resources",
        "ownedPrograms",
        "stage",
        "turn",
        "showActivated",
        "scheduledTasksDisabled",
        "exit",
        "cellFlags",
        "scheduledTaskInterval",
        "nextScheduledTaskTurn",
        "pendingSiphonTransmissions",
        "stepActive",
        "atkPlusUsesThisStage",
        "seed",
        "stepIndex",
        "gameWon",
        "undoHistory",
    ]
    assert d["player"] == {
        "row": 2,
        "col": 2,
        "hp": 2,
        "credits": 4,
        "energy": 3,
        "dataSiphons": 1,
        "attackDamage": 1,
        "score": 0,
    }
    assert d["enemies"][0] == {
        "type": "cryptog",
        "row": 4,
        "col": 4,
        "hp": 1,
        "stunned": False,
        "spawnedFromSiphon": False,
        "isFromScheduledTask": False,
        "disabledTurns": 0,
        "lastKnownRow": 4,
        "lastKnownCol": 4,
    }
    assert d["enemies"][1]["lastKnownRow"] is None and d["enemies"][1]["lastKnownCol"] is None
    assert d["blocks"] == [
        {
            "row": 1,
            "col": 1,
            "type": "program",
            "siphoned": False,
            "spawnCount": 6,
            "programType": "crash",
            "programActionIndex": 7,
        },
        {"row": 2, "col": 3, "type": "data", "siphoned": False, "spawnCount": 3, "points": 3},
        {
            "row": 4,
            "col": 1,
            "type": "question",
            "siphoned": False,
            "spawnCount": 2,
            "isData": False,
            "programType": "atk+",
            "programActionIndex": 26,
        },
    ]
    assert d["resources"] == [
        {"row": 0, "col": 5, "credits": 1, "energy": 0, "dataSiphon": True},
        {"row": 1, "col": 2, "credits": 0, "energy": 2, "dataSiphon": False},
    ]
    assert d["ownedPrograms"] == [10, 18] and d["exit"] == {"row": 5, "col": 0}
    assert (d["scheduledTaskInterval"], d["nextScheduledTaskTurn"], d["seed"], d["stepIndex"]) == (
        12,
        12,
        7,
        12,
    )
    assert d["cellFlags"] == [] and d["undoHistory"] == [] and d["gameWon"] is False


def test_round_trip_of_played_states():
    _, s = RESET_FROM_SEED(5)
    rng = np.random.default_rng(0)
    for _ in range(60):
        d = J.state_to_json(s)
        back = J.state_from_json(copy.deepcopy(d))
        assert J.state_to_json(back) == d
        assert np.array_equal(
            np.asarray(J.flatten_observation(OBSERVE(back))),
            np.asarray(J.flatten_observation(OBSERVE(s))),
        )
        assert np.array_equal(np.asarray(MASK(back)), np.asarray(MASK(s)))
        mask = np.asarray(MASK(s))
        if not mask.any():
            break
        _, s, _, _, _ = STEP(None, s, int(rng.choice(np.nonzero(mask)[0])))


def test_snapshot_round_trip_and_siphoned_block_mark_in_both_places():
    start = {
        "player": {"row": 2, "col": 2, "energy": 1, "dataSiphons": 1},
        "ownedPrograms": [10],
        "blocks": [{"row": 2, "col": 3, "type": "data", "points": 2}],
    }
    s = J.state_from_json(start)
    _, s, _, _, _ = STEP(None, s, 4)
    d = J.state_to_json(s)
    assert len(d["undoHistory"]) == 1
    assert {"row": 2, "col": 3, "siphoned": True, "siphonCenter": False} in d["cellFlags"]
    assert d["blocks"][0]["siphoned"] is True
    snap = d["undoHistory"][0]
    assert set(snap) == {
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
    assert J.state_to_json(J.state_from_json(copy.deepcopy(d))) == d


def test_reset_state_round_trips():
    d = reset_json(0)
    assert J.state_to_json(J.state_from_json(copy.deepcopy(d))) == d


BASE = {"player": {"row": 0, "col": 0}}


@pytest.mark.parametrize(
    "patch, message",
    [
        (
            {
                "enemies": [
                    {"type": "virus", "row": 1, "col": 1, "hp": 2},
                    {"type": "daemon", "row": 2, "col": 2, "hp": 4},
                ]
            },
            "state.enemies[1].hp: out of range",
        ),
        ({"player": {"row": 6, "col": 0}}, "state.player.row: out of range"),
        ({"player": {"col": 0}}, "state.player.row: missing required field"),
        ({"bogus": 1}, "state.bogus: unknown key"),
        ({"player": {"row": 0, "col": 0, "hp": True}}, "state.player.hp: expected an integer"),
        ({"stage": 9}, "state.stage: out of range"),
        (
            {"enemies": [{"type": "dragon", "row": 1, "col": 1, "hp": 1}]},
            "state.enemies[0].type: unknown enemy type",
        ),
        (
            {
                "enemies": [
                    {"type": "virus", "row": 1, "col": 1, "hp": 1},
                    {"type": "virus", "row": 1, "col": 1, "hp": 1},
                ]
            },
            "state.enemies[1]: two enemies on one cell",
        ),
        (
            {"enemies": [{"type": "virus", "row": 0, "col": 0, "hp": 1}]},
            "state.enemies[0]: an enemy on the player's cell",
        ),
        (
            {"transmissions": [{"row": 1, "col": 1, "turnsRemaining": 0, "enemyType": "virus"}]},
            "state.transmissions[0].turnsRemaining: out of range",
        ),
        (
            {
                "transmissions": [{"row": 1, "col": 1, "turnsRemaining": 1, "enemyType": "virus"}],
                "blocks": [{"row": 1, "col": 1, "type": "data", "points": 1}],
            },
            "state.transmissions[0]: a transmission on a block",
        ),
        (
            {"blocks": [{"row": 5, "col": 5, "type": "data"}]},
            "state.blocks[0]: a block on the exit cell",
        ),
        (
            {"resources": [{"row": 1, "col": 1, "credits": 1, "energy": 1}]},
            "state.resources[0]: a cell holds both",
        ),
        (
            {"blocks": [{"row": 1, "col": 1, "type": "question", "points": 1}]},
            "state.blocks[0].isData: missing",
        ),
        (
            {
                "blocks": [
                    {
                        "row": 1,
                        "col": 1,
                        "type": "program",
                        "programType": "crash",
                        "programActionIndex": 8,
                    }
                ]
            },
            "state.blocks[0].programActionIndex: does not match",
        ),
        (
            {"blocks": [{"row": 1, "col": 1, "type": "program", "programType": "laser"}]},
            "state.blocks[0].programType: unknown program",
        ),
        ({"exit": {"row": 2, "col": 2}}, "state.exit: not a corner"),
        ({"gameWon": True}, "state.gameWon: requires stage 8"),
        ({"ownedPrograms": [5, 5]}, "state.ownedPrograms[1]: repeated program"),
        (
            {"undoHistory": [{"player": {"row": 0, "col": 0}}] * 5},
            "state.undoHistory: more than 4 snapshots",
        ),
        (
            {"undoHistory": [{"player": {"row": 0, "col": 0}, "exit": {"row": 0, "col": 5}}]},
            "state.undoHistory[0].exit: differs",
        ),
        (
            {
                "undoHistory": [
                    {
                        "player": {"row": 0, "col": 0},
                        "enemies": [
                            {"type": "virus", "row": 1, "col": 1, "hp": 1, "stunned": True}
                        ],
                    }
                ]
            },
            "state.undoHistory[0].enemies[0]: a snapshot enemy cannot be stunned",
        ),
        ({"seed": 4294967296}, "state.seed: out of range"),
        (
            {"player": {"row": 0, "col": 0, "credits": 1000001}},
            "state.player.credits: out of range",
        ),
        (
            {
                "blocks": [
                    {"row": 0, "col": 1, "type": "data", "points": 1},
                    {"row": 1, "col": 0, "type": "data", "points": 1},
                ]
            },
            "state: no legal action",
        ),
    ],
)
def test_validation_errors_name_the_path(patch, message):
    d = {**copy.deepcopy(BASE), **patch}
    with pytest.raises(ValueError) as err:
        J.state_from_json(d)
    assert str(err.value).startswith(message), str(err.value)


def test_finished_states_load_with_empty_mask():
    s = J.state_from_json({"player": {"row": 0, "col": 0, "hp": 0}})
    assert not np.asarray(MASK(s)).any()
    s = J.state_from_json({"player": {"row": 5, "col": 5, "hp": 2}, "stage": 8, "gameWon": True})
    assert not np.asarray(MASK(s)).any()
    _, s2, reward, done, info = STEP(None, s, 0)
    assert bool(info["invalid_action"]) and float(reward) == 0.0 and not bool(done)
    assert jax.tree_util.tree_all(
        jax.tree_util.tree_map(lambda a, b: bool(np.array_equal(a, b)), s, s2)
    )


def test_value_rules_null_integral_floats_and_enum_case():
    d = J.state_to_json(
        J.state_from_json(
            {
                "player": {"row": 0.0, "col": 0, "hp": None, "credits": 3e0},
                "enemies": [
                    {
                        "type": "CRYPTOG",
                        "row": 2,
                        "col": 2,
                        "hp": 2,
                        "lastKnownRow": None,
                        "lastKnownCol": None,
                        "stunned": None,
                    }
                ],
                "blocks": [{"row": 1, "col": 1, "type": "Program", "programType": "SIPH+"}],
                "stage": None,
                "undoHistory": None,
            }
        )
    )
    assert d["player"]["hp"] == 3 and d["player"]["credits"] == 3 and d["stage"] == 1
    assert (
        d["enemies"][0]["type"],
        d["enemies"][0]["lastKnownRow"],
        d["enemies"][0]["lastKnownCol"],
    ) == ("cryptog", 2, 2)
    assert d["blocks"][0]["programType"] == "siph+" and d["blocks"][0]["type"] == "program"
    with pytest.raises(ValueError, match=r"^state\.player\.credits: expected an integer"):
        J.state_from_json({"player": {"row": 0, "col": 0, "credits": 3.5}})
    with pytest.raises(ValueError, match=r"^state\.showActivated: expected a boolean"):
        J.state_from_json({"player": {"row": 0, "col": 0}, "showActivated": 1})
