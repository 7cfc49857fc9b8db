"""Every scenario SC-01..SC-47 of game-rules.md §16: state_from_json → step → state_to_json."""

import numpy as np

from .helpers import board_table, final_json, last, mask_of, pos, positions, reset_json, run, state


def enemy(t, r, c, **kw):
    return {"type": t, "row": r, "col": c, "hp": kw.pop("hp", {"daemon": 3}.get(t, 2)), **kw}


def tx(r, c, n, t, **kw):
    return {"row": r, "col": c, "turnsRemaining": n, "enemyType": t, **kw}


def data(r, c, pts, spawn=None, **kw):
    return {
        "row": r,
        "col": c,
        "type": "data",
        "points": pts,
        "spawnCount": pts if spawn is None else spawn,
        **kw,
    }


def kills(info):
    return float(info["reward_components"]["kills"])


# ---------------------------------------------------------------- movement, line of fire, mask


def test_sc01_plain_move():
    d, _, _, _ = last(state({"row": 2, "col": 2}), [0])
    assert pos(d["player"]) == (3, 2)
    assert d["turn"] == 1 and len(d["undoHistory"]) == 1 and d["stepIndex"] == 1


def test_sc02_direction_mask():
    a = state(
        {"row": 2, "col": 2},
        blocks=[data(3, 2, 2), data(2, 3, 2)],
        enemies=[enemy("daemon", 2, 3)],
        transmissions=[tx(2, 1, 2, "virus")],
    )
    assert list(mask_of(a)[:4]) == [False, True, True, True]
    assert list(mask_of(state({"row": 0, "col": 0}))[:4]) == [True, False, False, True]


def test_sc03_attack_at_range_and_stun():
    d, _, _, info = last(state({"row": 0, "col": 3}, enemies=[enemy("virus", 4, 3)]), [0])
    e = d["enemies"][0]
    assert (pos(e), e["hp"], e["stunned"]) == ((4, 3), 1, False)
    assert pos(d["player"]) == (0, 3) and d["turn"] == 1 and kills(info) == 0


def test_sc04_block_stops_line_then_virus_paths_around():
    d, *_ = last(
        state({"row": 0, "col": 3}, blocks=[data(2, 3, 5)], enemies=[enemy("virus", 4, 3)]), [0]
    )
    assert pos(d["player"]) == (1, 3)
    assert (pos(d["enemies"][0]), d["enemies"][0]["hp"]) == ((3, 2), 2)
    assert d["turn"] == 1


def test_sc05_transmission_hit_before_enemy():
    d, _, _, info = last(
        state(
            {"row": 1, "col": 1},
            transmissions=[tx(1, 3, 2, "daemon")],
            enemies=[enemy("daemon", 1, 5)],
        ),
        [3],
    )
    assert d["transmissions"] == [] and positions(d["enemies"]) == [(1, 4)]
    assert pos(d["player"]) == (1, 1) and d["turn"] == 1
    assert np.isclose(kills(info), 0.3)


def test_sc06_kill_enemy_on_block():
    d, _, _, info = last(
        state(
            {"row": 0, "col": 3, "attackDamage": 2},
            blocks=[data(2, 3, 5)],
            enemies=[enemy("glitch", 2, 3)],
        ),
        [0],
    )
    assert d["enemies"] == [] and np.isclose(kills(info), 0.3)
    assert len(d["blocks"]) == 1 and pos(d["player"]) == (0, 3) and d["turn"] == 1


def test_sc07_walking_collects_data_siphon_not_credits():
    d, _, _, info = last(
        state(
            {"row": 0, "col": 1}, resources=[{"row": 0, "col": 0, "dataSiphon": True, "credits": 2}]
        ),
        [2],
    )
    assert (
        pos(d["player"]) == (0, 0)
        and d["player"]["dataSiphons"] == 1
        and d["player"]["credits"] == 0
    )
    assert d["resources"] == [{"row": 0, "col": 0, "credits": 2, "energy": 0, "dataSiphon": False}]
    assert info["reward_components"]["data_siphon"] == 1.0 and d["turn"] == 1


# ---------------------------------------------------------------- stage transitions and game end

SC08_BOARD = [
    ["S+e1", "c1", "D9/9", "e2", "e2", "@c1"],
    ["c2", "c2", "D6/6", "c1", "D7/7", "c2"],
    ["D4/4", "c3", "P:D_BOM/4", "c1", "c1", "e1"],
    ["c2", "c1", "c2", "Q:REDUC/3", "e1", "P:RESET/2"],
    ["e1", "e2", "c1", "P:HACK/4", "e1", "c2"],
    ["S+e1", "P:ROW/2", "e1", "c1", "e1", "X"],
]


def test_sc08_stage_completion_and_generation():
    snap = {"player": {"row": 5, "col": 3, "hp": 2, "credits": 3}, "turn": 7}
    start = state(
        {"row": 5, "col": 4, "hp": 2, "credits": 3},
        stepIndex=5,
        turn=7,
        scheduledTaskInterval=9,
        nextScheduledTaskTurn=20,
        showActivated=True,
        scheduledTasksDisabled=True,
        atkPlusUsesThisStage=2,
        undoHistory=[snap],
        enemies=[enemy("daemon", 2, 2, stunned=True)],
        transmissions=[tx(3, 3, 2, "virus")],
    )
    d, *_ = last(start, [3])
    assert d["player"]["hp"] == 3 and d["stage"] == 2 and d["scheduledTaskInterval"] == 11
    assert d["turn"] == 0 and d["nextScheduledTaskTurn"] == 11
    assert not d["showActivated"] and not d["scheduledTasksDisabled"] and not d["stepActive"]
    assert d["atkPlusUsesThisStage"] == 0 and d["undoHistory"] == [] and d["stepIndex"] == 6
    assert pos(d["exit"]) == (0, 5) and len(d["blocks"]) == 9
    e = d["enemies"][0]
    assert (pos(e), e["hp"], e["stunned"]) == ((2, 2), 3, True)
    assert [(pos(t), t["turnsRemaining"], t["enemyType"]) for t in d["transmissions"]] == [
        ((3, 3), 2, "virus"),
        ((1, 4), 1, "cryptog"),
        ((3, 1), 1, "glitch"),
    ]
    assert board_table(d) == SC08_BOARD


def test_sc09_victory():
    start = state(
        {"row": 4, "col": 5, "hp": 1, "score": 20},
        stage=8,
        stepIndex=40,
        enemies=[enemy("virus", 3, 3)],
    )
    d, _, done, info = last(start, [0])
    assert (
        pos(d["player"]) == (5, 5) and d["player"]["hp"] == 2 and d["gameWon"] and d["stage"] == 8
    )
    assert positions(d["enemies"]) == [(3, 3)] and d["turn"] == 0 and done and bool(info["won"])
    assert info["reward_components"]["stage_completion"] == 100.0


def test_sc10_death():
    d, _, done, info = last(
        state(
            {"row": 3, "col": 3, "hp": 1, "energy": 1},
            ownedPrograms=[10],
            enemies=[enemy("virus", 4, 3)],
        ),
        [10],
    )
    assert d["player"]["energy"] == 0 and d["player"]["hp"] == 0 and done and bool(info["died"])
    assert d["turn"] == 1 and len(d["undoHistory"]) == 1 and positions(d["enemies"]) == [(4, 3)]
    assert info["reward_components"]["siphon_death_penalty"] == 0.0


def test_sc11_two_attackers_death_to_siphon_enemy():
    d, _, done, info = last(
        state(
            {"row": 3, "col": 3, "hp": 2, "energy": 1},
            ownedPrograms=[10],
            enemies=[enemy("daemon", 2, 3), enemy("virus", 5, 3, spawnedFromSiphon=True)],
        ),
        [10],
    )
    assert positions(d["enemies"]) == [(2, 3), (4, 3)]
    assert d["player"]["hp"] == 0 and done and d["turn"] == 1
    assert info["reward_components"]["siphon_death_penalty"] == -10.0


# ---------------------------------------------------------------- siphon


def test_sc12_draining_a_full_cross():
    start = state(
        {"row": 2, "col": 2, "dataSiphons": 1},
        blocks=[
            data(3, 2, 4),
            {"row": 1, "col": 2, "type": "program", "programType": "show", "spawnCount": 2},
        ],
        resources=[
            {"row": 2, "col": 1, "credits": 2},
            {"row": 2, "col": 3, "energy": 3},
            {"row": 2, "col": 2, "credits": 1},
            {"row": 4, "col": 4, "energy": 1},
        ],
    )
    d, _, _, info = last(start, [4])
    p = d["player"]
    assert (p["score"], p["credits"], p["energy"], p["dataSiphons"]) == (4, 3, 3, 0)
    assert d["ownedPrograms"] == [18]
    assert d["scheduledTaskInterval"] == 11 and d["nextScheduledTaskTurn"] == 17
    assert d["pendingSiphonTransmissions"] == 0 and d["turn"] == 1
    blocks = {pos(b): b for b in d["blocks"]}
    assert (blocks[(3, 2)]["points"], blocks[(3, 2)]["spawnCount"], blocks[(3, 2)]["siphoned"]) == (
        4,
        0,
        True,
    )
    assert (blocks[(1, 2)]["programType"], blocks[(1, 2)]["spawnCount"]) == ("show", 0)
    assert d["resources"] == [{"row": 4, "col": 4, "credits": 0, "energy": 1, "dataSiphon": False}]
    flags = {pos(f): f for f in d["cellFlags"]}
    assert set(flags) == {(2, 2), (3, 2), (1, 2), (2, 1), (2, 3)}
    assert all(f["siphoned"] for f in flags.values()) and flags[(2, 2)]["siphonCenter"]
    assert sum(f["siphonCenter"] for f in flags.values()) == 1
    assert [
        (pos(t), t["enemyType"], t["turnsRemaining"], t["spawnedFromSiphon"])
        for t in d["transmissions"]
    ] == [
        ((5, 2), "virus", 1, True),
        ((5, 5), "cryptog", 1, True),
        ((0, 0), "virus", 1, True),
        ((5, 4), "cryptog", 1, True),
        ((1, 3), "glitch", 1, True),
        ((4, 2), "cryptog", 1, True),
    ]
    # events through the rewards: +4 score, +3 credits +3 energy
    assert info["reward_components"]["score_gain"] == 2.0


def test_sc13_question_owned_program_siphoned_cells_and_step():
    start = state(
        {"row": 2, "col": 2, "dataSiphons": 2},
        stepActive=True,
        ownedPrograms=[5],
        blocks=[
            {"row": 3, "col": 2, "type": "question", "isData": True, "points": 5, "spawnCount": 5},
            {"row": 1, "col": 2, "type": "program", "programType": "push", "spawnCount": 4},
            data(2, 1, 3, 0, siphoned=True),
        ],
        resources=[{"row": 2, "col": 3, "energy": 2}],
        cellFlags=[{"row": 2, "col": 3, "siphoned": True}],
    )
    d, *_ = last(start, [4])
    blocks = {pos(b): b for b in d["blocks"]}
    assert d["player"]["score"] == 5 and d["player"]["dataSiphons"] == 1
    assert blocks[(3, 2)] == {
        "row": 3,
        "col": 2,
        "type": "data",
        "siphoned": True,
        "spawnCount": 0,
        "points": 5,
    }
    assert (
        blocks[(1, 2)]["spawnCount"] == 0
        and blocks[(1, 2)]["siphoned"]
        and d["ownedPrograms"] == [5]
    )
    assert d["resources"] == [{"row": 2, "col": 3, "credits": 0, "energy": 2, "dataSiphon": False}]
    flags = {pos(f): f for f in d["cellFlags"]}
    assert flags[(2, 2)] == {"row": 2, "col": 2, "siphoned": True, "siphonCenter": True}
    assert d["scheduledTaskInterval"] == 11 and d["nextScheduledTaskTurn"] == 17
    assert d["pendingSiphonTransmissions"] == 9 and not d["stepActive"] and d["turn"] == 0
    assert d["undoHistory"] == []


# ---------------------------------------------------------------- enemy phase

WAITING = {"energy": 1}


def test_sc14_tie_break_vertical_first():
    d = final_json(
        state({"row": 1, "col": 1, **WAITING}, ownedPrograms=[10], enemies=[enemy("daemon", 3, 3)]),
        [10],
    )
    assert positions(d["enemies"]) == [(2, 3)] and d["turn"] == 1


def test_sc15_detour_around_enemy():
    d = final_json(
        state(
            {"row": 0, "col": 0, **WAITING},
            ownedPrograms=[10],
            enemies=[enemy("daemon", 0, 2), enemy("daemon", 0, 3)],
        ),
        [10],
    )
    assert positions(d["enemies"]) == [(0, 1), (1, 3)]


def test_sc16_greedy_fallback_steps_back():
    d = final_json(
        state(
            {"row": 0, "col": 0, **WAITING},
            ownedPrograms=[10],
            enemies=[enemy("daemon", 0, 2), enemy("daemon", 0, 3)],
            blocks=[data(1, c, 1) for c in range(5)],
        ),
        [10],
    )
    assert positions(d["enemies"]) == [(0, 1), (0, 4)]


def test_sc17_route_two_toward_blocking_transmission():
    d = final_json(
        state(
            {"row": 0, "col": 0, **WAITING},
            ownedPrograms=[10],
            blocks=[data(1, c, 1) for c in range(5)],
            transmissions=[tx(0, 1, 3, "virus")],
            enemies=[enemy("daemon", 0, 3)],
        ),
        [10],
    )
    assert d["transmissions"][0]["turnsRemaining"] == 2 and positions(d["enemies"]) == [(0, 2)]


def test_sc18_virus_double_move_then_attack():
    out = run(
        state(
            {"row": 0, "col": 0, "energy": 2}, ownedPrograms=[10], enemies=[enemy("virus", 4, 0)]
        ),
        [10, 10],
    )
    first, second = out[0][0], out[1][0]
    assert positions(first["enemies"]) == [(2, 0)] and first["turn"] == 1
    assert positions(second["enemies"]) == [(1, 0)] and second["player"]["hp"] == 2
    assert second["turn"] == 2 and len(second["undoHistory"]) == 2


def test_sc19_glitch_onto_block_daemon_around():
    base = dict(ownedPrograms=[10], blocks=[data(2, 0, 2)])
    d = final_json(
        state({"row": 0, "col": 0, **WAITING}, enemies=[enemy("glitch", 3, 0)], **base), [10]
    )
    assert positions(d["enemies"]) == [(2, 0)]
    d = final_json(
        state({"row": 0, "col": 0, **WAITING}, enemies=[enemy("daemon", 3, 0)], **base), [10]
    )
    assert positions(d["enemies"]) == [(3, 1)]


def test_sc20_cryptog_last_known():
    d = final_json(
        state(
            {"row": 1, "col": 1, **WAITING},
            ownedPrograms=[10],
            enemies=[enemy("cryptog", 2, 3), enemy("cryptog", 3, 4)],
        ),
        [10],
    )
    e0, e1 = d["enemies"]
    assert pos(e0) == (1, 3) and (e0["lastKnownRow"], e0["lastKnownCol"]) == (1, 3)
    assert pos(e1) == (2, 4) and (e1["lastKnownRow"], e1["lastKnownCol"]) == (3, 4)


def test_sc21_transmission_completes():
    d = final_json(
        state(
            {"row": 0, "col": 0, **WAITING},
            ownedPrograms=[10],
            transmissions=[tx(4, 4, 1, "daemon", spawnedFromSiphon=True), tx(2, 5, 3, "glitch")],
        ),
        [10],
    )
    assert d["enemies"] == [
        {
            "type": "daemon",
            "row": 4,
            "col": 4,
            "hp": 3,
            "stunned": False,
            "spawnedFromSiphon": True,
            "isFromScheduledTask": False,
            "disabledTurns": 0,
            "lastKnownRow": None,
            "lastKnownCol": None,
        }
    ]
    assert [(pos(t), t["turnsRemaining"], t["enemyType"]) for t in d["transmissions"]] == [
        ((2, 5), 2, "glitch")
    ]
    assert d["turn"] == 1


def test_sc22_scheduled_task_fires():
    d = final_json(
        state(
            {"row": 0, "col": 0, **WAITING},
            turn=11,
            nextScheduledTaskTurn=12,
            ownedPrograms=[10],
            blocks=[data(0, 2, 3)],
            enemies=[enemy("daemon", 3, 0)],
        ),
        [10],
    )
    assert d["turn"] == 12 and positions(d["enemies"]) == [(2, 0)]
    assert d["transmissions"] == [
        {
            "row": 4,
            "col": 1,
            "turnsRemaining": 1,
            "enemyType": "glitch",
            "isFromScheduledTask": True,
            "spawnedFromSiphon": False,
        }
    ]
    assert d["nextScheduledTaskTurn"] == 24


def test_sc23_step_skips_enemy_phase():
    out = run(
        state(
            {"row": 0, "col": 0, "energy": 3},
            ownedPrograms=[15],
            enemies=[enemy("daemon", 3, 3, stunned=True)],
            transmissions=[tx(5, 0, 1, "virus")],
        ),
        [15, 3],
    )
    a, b = out[0][0], out[1][0]
    assert a["player"]["energy"] == 0 and a["stepActive"] and a["turn"] == 0
    assert pos(b["player"]) == (0, 1) and not b["stepActive"] and b["turn"] == 0
    assert b["transmissions"][0]["turnsRemaining"] == 1 and b["enemies"][0]["stunned"]
    assert pos(b["enemies"][0]) == (3, 3) and b["undoHistory"] == [] and b["stepIndex"] == 2


# ---------------------------------------------------------------- programs


def test_sc24_push_claims_cancellations_cascade():
    start = state(
        {"row": 2, "col": 2, "energy": 2},
        ownedPrograms=[5],
        enemies=[
            enemy("daemon", 3, 2),
            enemy("virus", 1, 4),
            enemy("glitch", 1, 5),
            enemy("daemon", 5, 5),
            enemy("cryptog", 4, 4),
            enemy("virus", 3, 3),
            enemy("daemon", 2, 1),
        ],
        transmissions=[tx(2, 0, 2, "virus")],
    )
    d = final_json(start, [5])
    assert d["player"]["energy"] == 0 and d["turn"] == 0
    assert positions(d["enemies"]) == [(4, 2), (0, 5), (1, 5), (5, 5), (4, 4), (3, 3), (2, 1)]
    assert positions(d["transmissions"]) == [(2, 0)]


def test_sc25_pull():
    d = final_json(
        state(
            {"row": 2, "col": 2, "energy": 2},
            ownedPrograms=[6],
            enemies=[
                enemy("daemon", 4, 4),
                enemy("virus", 3, 3),
                enemy("glitch", 2, 5),
                enemy("daemon", 2, 1),
                enemy("virus", 0, 2),
            ],
        ),
        [6],
    )
    assert positions(d["enemies"]) == [(3, 3), (2, 3), (2, 4), (2, 1), (1, 2)]
    assert d["player"]["energy"] == 0


def test_sc26_crash():
    start = state(
        {"row": 2, "col": 2, "credits": 3, "energy": 2},
        ownedPrograms=[7],
        blocks=[
            data(3, 1, 2),
            {
                "row": 3,
                "col": 2,
                "type": "program",
                "programType": "row",
                "spawnCount": 0,
                "siphoned": True,
            },
        ],
        resources=[{"row": 3, "col": 1, "energy": 2}, {"row": 1, "col": 1, "credits": 1}],
        enemies=[
            enemy("virus", 3, 3),
            enemy("glitch", 1, 3, isFromScheduledTask=True),
            enemy("virus", 4, 2),
        ],
        transmissions=[tx(2, 1, 2, "daemon")],
    )
    d, _, _, info = last(start, [7])
    assert (d["player"]["credits"], d["player"]["energy"]) == (0, 0)
    assert d["blocks"] == [] and d["transmissions"] == []
    assert positions(d["enemies"]) == [(4, 2)]
    assert {pos(r): (r["credits"], r["energy"]) for r in d["resources"]} == {
        (1, 1): (1, 0),
        (3, 1): (0, 2),
    }
    assert d["cellFlags"] == [{"row": 3, "col": 2, "siphoned": True, "siphonCenter": False}]
    assert np.isclose(kills(info), 0.6)  # one enemy + one transmission


def test_sc27_warp_to_lone_transmission_on_data_siphon():
    d, _, _, info = last(
        state(
            {"row": 0, "col": 0, "credits": 2, "energy": 2},
            ownedPrograms=[8],
            resources=[{"row": 3, "col": 3, "dataSiphon": True}],
            transmissions=[tx(3, 3, 2, "virus")],
        ),
        [8],
    )
    assert (
        pos(d["player"]) == (3, 3) and d["transmissions"] == [] and d["player"]["dataSiphons"] == 0
    )
    assert d["resources"] == [{"row": 3, "col": 3, "credits": 0, "energy": 0, "dataSiphon": True}]
    assert (d["player"]["credits"], d["player"]["energy"]) == (0, 0) and np.isclose(
        kills(info), 0.3
    )


def test_sc28_warp_random_target():
    d, _, _, info = last(
        state(
            {"row": 0, "col": 0, "credits": 2, "energy": 2},
            ownedPrograms=[8],
            enemies=[enemy("daemon", 1, 1), enemy("virus", 4, 4)],
            transmissions=[tx(2, 5, 1, "glitch")],
        ),
        [8],
    )
    assert pos(d["player"]) == (4, 4) and positions(d["enemies"]) == [(1, 1)]
    assert positions(d["transmissions"]) == [(2, 5)] and np.isclose(kills(info), 0.3)


def test_sc29_warp_onto_exit_completes_stage():
    d, _, _, info = last(
        state(
            {"row": 0, "col": 0, "hp": 1, "credits": 2, "energy": 2},
            stepIndex=3,
            ownedPrograms=[8],
            enemies=[enemy("virus", 5, 5)],
        ),
        [8],
    )
    assert pos(d["player"]) == (5, 5) and d["enemies"] == [] and np.isclose(kills(info), 0.3)
    assert d["player"]["hp"] == 2 and d["stage"] == 2 and d["scheduledTaskInterval"] == 11
    assert d["nextScheduledTaskTurn"] == 11 and pos(d["exit"]) == (0, 0)
    pickups = sorted(pos(r) for r in d["resources"] if r["dataSiphon"])
    assert pickups == [(0, 5), (5, 0)] and len(d["blocks"]) == 7
    assert [(pos(t), t["turnsRemaining"], t["enemyType"]) for t in d["transmissions"]] == [
        ((0, 1), 1, "daemon"),
        ((4, 2), 1, "cryptog"),
    ]
    assert d["turn"] == 0 and d["stepIndex"] == 4


def test_sc30_poly():
    start = state(
        {"row": 3, "col": 3, "credits": 1, "energy": 1},
        ownedPrograms=[9],
        enemies=[
            enemy("daemon", 0, 4, hp=1),
            enemy("virus", 3, 0, hp=2),
            enemy("cryptog", 4, 4, hp=1),
            enemy("glitch", 1, 2, hp=2, stunned=True),
        ],
    )
    d, _, _, info = last(start, [9])
    got = [(e["type"], pos(e), e["hp"], e["stunned"]) for e in d["enemies"]]
    assert got == [
        ("daemon", (3, 0), 3, False),
        ("daemon", (4, 4), 2, False),
        ("cryptog", (1, 2), 2, True),
    ]
    assert (d["enemies"][2]["lastKnownRow"], d["enemies"][2]["lastKnownCol"]) == (1, 2)
    assert np.isclose(kills(info), 0.3) and (d["player"]["credits"], d["player"]["energy"]) == (
        0,
        0,
    )


def test_sc31_debug():
    start = state(
        {"row": 2, "col": 2, "credits": 3},
        ownedPrograms=[11],
        blocks=[data(4, 4, 5), data(1, 0, 2)],
        enemies=[enemy("glitch", 4, 4), enemy("daemon", 1, 0), enemy("virus", 5, 3)],
    )
    d = final_json(start, [11])
    assert [(e["hp"], e["stunned"]) for e in d["enemies"]] == [(1, True), (2, True), (2, False)]
    assert d["player"]["credits"] == 0


def test_sc32_row():
    start = state(
        {"row": 3, "col": 3, "credits": 3, "energy": 1},
        ownedPrograms=[12],
        blocks=[data(3, 4, 1)],
        enemies=[enemy("virus", 3, 0, hp=1), enemy("daemon", 3, 5), enemy("virus", 4, 3)],
    )
    d, _, _, info = last(start, [12])
    assert [(pos(e), e["hp"], e["stunned"]) for e in d["enemies"]] == [
        ((3, 5), 2, True),
        ((4, 3), 2, False),
    ]
    assert np.isclose(kills(info), 0.3) and (d["player"]["credits"], d["player"]["energy"]) == (
        0,
        0,
    )


def test_sc33_col_with_attack_two():
    start = state(
        {"row": 3, "col": 3, "credits": 3, "energy": 1, "attackDamage": 2},
        ownedPrograms=[13],
        enemies=[enemy("daemon", 0, 3), enemy("virus", 5, 3), enemy("glitch", 3, 4)],
    )
    d, _, _, info = last(start, [13])
    assert [(pos(e), e["hp"], e["stunned"]) for e in d["enemies"]] == [
        ((0, 3), 1, True),
        ((3, 4), 2, False),
    ]
    assert np.isclose(kills(info), 0.3)


def test_sc34_undo():
    start = state(
        {"row": 2, "col": 2, "credits": 6, "energy": 1},
        ownedPrograms=[10, 16, 14],
        enemies=[enemy("daemon", 5, 2), enemy("virus", 0, 5, spawnedFromSiphon=True)],
    )
    out = run(start, [10, 16, 14])
    a, b, c = (o[0] for o in out)
    assert (
        a["player"]["energy"] == 0
        and positions(a["enemies"]) == [(4, 2), (2, 5)]
        and a["turn"] == 1
    )
    assert len(a["undoHistory"]) == 1
    snap = a["undoHistory"][0]
    assert (snap["player"]["credits"], snap["player"]["energy"], snap["player"]["dataSiphons"]) == (
        6,
        0,
        0,
    )
    assert (
        positions(snap["enemies"]) == [(4, 2), (2, 5)]
        and not snap["enemies"][1]["spawnedFromSiphon"]
    )
    assert (b["player"]["credits"], b["player"]["dataSiphons"]) == (1, 1)
    assert mask_of(b)[14]
    assert (
        c["player"]["credits"],
        c["player"]["energy"],
        c["player"]["dataSiphons"],
        c["turn"],
    ) == (6, 0, 0, 1)
    assert positions(c["enemies"]) == [(4, 2), (2, 5)] and not c["enemies"][1]["spawnedFromSiphon"]
    assert c["undoHistory"] == [] and not mask_of(c)[14] and c["stepIndex"] == 3


def test_sc35_siph_plus():
    d = final_json(
        state(
            {"row": 3, "col": 3, "credits": 5}, ownedPrograms=[16], enemies=[enemy("daemon", 5, 4)]
        ),
        [16],
    )
    assert (d["player"]["credits"], d["player"]["dataSiphons"]) == (0, 1) and positions(
        d["enemies"]
    ) == [(5, 4)]


def test_sc36_exch():
    d = final_json(state({"row": 3, "col": 3, "credits": 8}, ownedPrograms=[17]), [17])
    assert (d["player"]["credits"], d["player"]["energy"]) == (4, 4)


def test_sc37_show():
    import hackmatrix.jax_env as J

    from .helpers import OBSERVE

    start = state(
        {"row": 3, "col": 3, "credits": 2}, ownedPrograms=[18], enemies=[enemy("cryptog", 5, 5)]
    )
    before = np.asarray(OBSERVE(J.state_from_json(start))["grid"])
    d = final_json(start, [18])
    assert d["player"]["credits"] == 0 and d["showActivated"] and not mask_of(d)[18]
    after = np.asarray(OBSERVE(J.state_from_json(d))["grid"])
    assert before[5, 5, 3] == 0.0 and after[5, 5, 3] == 1.0


def test_sc38_reset():
    d, _, _, info = last(
        state({"row": 3, "col": 3, "hp": 1, "energy": 4}, ownedPrograms=[19]), [19]
    )
    assert (d["player"]["hp"], d["player"]["energy"]) == (3, 0) and info["reward_components"][
        "program_waste"
    ] == 0
    _, _, _, info = last(
        state({"row": 3, "col": 3, "hp": 2, "energy": 4}, ownedPrograms=[19]), [19]
    )
    assert np.isclose(info["reward_components"]["program_waste"], -0.3)
    assert not mask_of(d)[19]


def test_sc39_calm_freezes_schedule():
    out = run(
        state({"row": 0, "col": 0, "credits": 2, "energy": 5}, turn=11, ownedPrograms=[20, 10]),
        [20, 10],
    )
    a, b = out[0][0], out[1][0]
    assert (a["player"]["credits"], a["player"]["energy"]) == (0, 1) and a["scheduledTasksDisabled"]
    assert b["player"]["energy"] == 0 and b["turn"] == 12 and b["transmissions"] == []
    assert b["nextScheduledTaskTurn"] == 12


def test_sc40_d_bom():
    start = state(
        {"row": 2, "col": 2, "credits": 3, "attackDamage": 3},
        ownedPrograms=[21],
        enemies=[
            enemy("daemon", 4, 2),
            enemy("daemon", 2, 4),
            enemy("virus", 5, 3, hp=2),
            enemy("glitch", 3, 1, hp=1),
            enemy("daemon", 4, 3),
        ],
    )
    d, _, _, info = last(start, [21])
    assert [(e["type"], pos(e), e["hp"], e["stunned"]) for e in d["enemies"]] == [
        ("daemon", (2, 4), 3, False),
        ("virus", (5, 3), 1, True),
        ("daemon", (4, 3), 2, True),
    ]
    assert np.isclose(kills(info), 0.6) and d["player"]["credits"] == 0


def test_sc41_delay():
    d = final_json(
        state(
            {"row": 0, "col": 0, "credits": 1, "energy": 2},
            ownedPrograms=[22],
            transmissions=[tx(3, 3, 1, "virus"), tx(4, 1, 2, "daemon")],
        ),
        [22],
    )
    assert [t["turnsRemaining"] for t in d["transmissions"]] == [4, 5]
    assert (d["player"]["credits"], d["player"]["energy"]) == (0, 0)


def test_sc42_anti_v():
    start = state(
        {"row": 3, "col": 3, "credits": 3, "attackDamage": 3},
        ownedPrograms=[23],
        enemies=[enemy("virus", 4, 3, hp=1), enemy("virus", 5, 5, hp=2), enemy("daemon", 0, 0)],
    )
    d, _, _, info = last(start, [23])
    assert [(pos(e), e["hp"], e["stunned"]) for e in d["enemies"]] == [
        ((5, 5), 1, True),
        ((0, 0), 3, False),
    ]
    assert np.isclose(kills(info), 0.3) and d["player"]["credits"] == 0


def test_sc43_score():
    d = final_json(
        state({"row": 3, "col": 3, "energy": 5, "score": 7}, stage=2, ownedPrograms=[24]), [24]
    )
    assert (d["player"]["score"], d["player"]["energy"]) == (13, 0)
    assert not mask_of(state({"row": 3, "col": 3, "energy": 5}, stage=8, ownedPrograms=[24]))[24]


def test_sc44_reduc():
    start = state(
        {"row": 0, "col": 0, "credits": 2, "energy": 1},
        ownedPrograms=[25],
        blocks=[
            data(1, 1, 3),
            {"row": 1, "col": 2, "type": "program", "programType": "warp", "spawnCount": 0},
            data(1, 3, 2, 0, siphoned=True),
            {
                "row": 1,
                "col": 4,
                "type": "question",
                "isData": False,
                "programType": "crash",
                "spawnCount": 6,
            },
        ],
    )
    d = final_json(start, [25])
    spawn = {pos(b): b["spawnCount"] for b in d["blocks"]}
    assert spawn == {(1, 1): 2, (1, 2): 0, (1, 3): 0, (1, 4): 5}
    assert (d["player"]["credits"], d["player"]["energy"]) == (0, 0)


def test_sc45_atk_plus_twice_then_new_stage():
    out = run(
        state({"row": 5, "col": 4, "credits": 12, "energy": 12}, ownedPrograms=[26]), [26, 26, 3]
    )
    a, b, c = (o[0] for o in out)
    assert (
        a["player"]["attackDamage"],
        a["atkPlusUsesThisStage"],
        a["player"]["credits"],
        a["player"]["energy"],
    ) == (2, 1, 8, 8)
    assert (b["player"]["attackDamage"], b["atkPlusUsesThisStage"], b["player"]["credits"]) == (
        3,
        2,
        4,
    )
    assert not mask_of(b)[26]
    assert c["stage"] == 2 and c["atkPlusUsesThisStage"] == 0 and c["player"]["attackDamage"] == 3
    assert mask_of(c)[26]


def test_sc46_hack():
    start = state(
        {"row": 2, "col": 2, "credits": 2, "energy": 2},
        ownedPrograms=[27],
        blocks=[data(3, 2, 5, 0, siphoned=True), data(4, 4, 4)],
        cellFlags=[{"row": 2, "col": 3, "siphoned": True}],
        enemies=[enemy("glitch", 3, 2, hp=1), enemy("daemon", 2, 3), enemy("glitch", 4, 4)],
    )
    d, _, _, info = last(start, [27])
    assert [(pos(e), e["hp"], e["stunned"]) for e in d["enemies"]] == [
        ((2, 3), 2, True),
        ((4, 4), 2, False),
    ]
    assert {pos(b): (b["points"], b["spawnCount"]) for b in d["blocks"]} == {
        (3, 2): (5, 0),
        (4, 4): (4, 4),
    }
    assert np.isclose(kills(info), 0.3)


# ---------------------------------------------------------------- reset

RESET_0 = [
    ["@e2", "P:STEP/4", "D6/6", "e1", "e2", "S+c1"],
    ["e2", "D4/4", "e3", "c2", "e2", "e2"],
    ["c2", "c2", "P:PUSH/4", "P:SCORE/5", "P:D_BOM/4", "c1"],
    ["c2", "P:DELAY/4", "D3/3", "c1", "c1", "c1"],
    ["e2", "c1", "e2", "c1", "c1", "c1"],
    ["S+c2", "c1", "D3/3", "e1", "D7/7", "X"],
]
RESET_1 = [
    ["X", "c1", "e1", "P:RESET/2", "e1", "S+c2"],
    ["e2", "e1", "e2", "D6/6", "D8/8", "e1"],
    ["e2", "c1", "e1", "c2", "c1", "c2"],
    ["c1", "Q:WAIT/1", "P:SHOW/2", "c2", "e1", "e1"],
    ["c1", "e1", "c1", "e1", "D2/2", "c3"],
    ["@c1", "D7/7", "P:ROW/2", "e3", "e1", "S+c1"],
]
RESET_12345 = [
    ["S+e2", "c2", "e2", "c3", "P:COL/2", "S+c2"],
    ["c1", "e2", "e2", "P:CALM/6", "P:ROW/2", "c1"],
    ["e3", "e2", "c2", "c1", "c1", "e2"],
    ["c3", "c1", "e3", "e2", "c3", "c1"],
    ["c2", "e1", "e1", "e1", "c2", "D6/6"],
    ["X", "P:CRASH/6", "D5/5", "D2/2", "e1", "@e2"],
]


def test_sc47_reset_seed_0():
    d = reset_json(0)
    p = d["player"]
    assert pos(p) == (5, 0) and (p["hp"], p["credits"], p["energy"], p["dataSiphons"]) == (
        3,
        0,
        0,
        1,
    )
    assert pos(d["exit"]) == (0, 5) and len(d["blocks"]) == 10
    assert d["transmissions"] == [
        {
            "row": 5,
            "col": 3,
            "turnsRemaining": 1,
            "enemyType": "virus",
            "isFromScheduledTask": False,
            "spawnedFromSiphon": False,
        }
    ]
    assert (d["turn"], d["scheduledTaskInterval"], d["nextScheduledTaskTurn"], d["stage"]) == (
        0,
        12,
        12,
        1,
    )
    assert d["enemies"] == [] and d["undoHistory"] == [] and d["stepIndex"] == 0 and d["seed"] == 0
    assert board_table(d) == RESET_0


def test_sc47_reset_seed_1_and_12345():
    d = reset_json(1)
    assert pos(d["player"]) == (0, 0) and d["player"]["energy"] == 11 and pos(d["exit"]) == (5, 0)
    assert len(d["blocks"]) == 8 and [(pos(t), t["enemyType"]) for t in d["transmissions"]] == [
        ((2, 3), "cryptog")
    ]
    assert board_table(d) == RESET_1
    d = reset_json(12345)
    assert pos(d["player"]) == (0, 5) and d["player"]["credits"] == 10 and pos(d["exit"]) == (0, 0)
    assert len(d["blocks"]) == 7 and [(pos(t), t["enemyType"]) for t in d["transmissions"]] == [
        ((3, 0), "virus")
    ]
    assert board_table(d) == RESET_12345


def test_undo_history_keeps_newest_four_and_pops_newest_first():
    out = run(
        state({"row": 0, "col": 0, "credits": 4, "energy": 6}, ownedPrograms=[10, 14]),
        [10] * 6 + [14] * 4,
    )
    after_waits = out[5][0]
    assert [s["turn"] for s in after_waits["undoHistory"]] == [3, 4, 5, 6]
    assert [s["player"]["energy"] for s in after_waits["undoHistory"]] == [3, 2, 1, 0]
    popped = [
        (
            o[0]["turn"],
            o[0]["player"]["energy"],
            o[0]["player"]["credits"],
            len(o[0]["undoHistory"]),
        )
        for o in out[6:]
    ]
    assert popped == [(6, 0, 4, 3), (5, 1, 4, 2), (4, 2, 4, 1), (3, 3, 4, 0)]
    assert out[-1][0]["stepIndex"] == 10
