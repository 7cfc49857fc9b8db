"""rewards.md §9 examples R1..R7 (float32 components, canonical left-to-right total)."""

import numpy as np

import hackmatrix.jax_env as J

from .helpers import run, state

NAMES = J.REWARD_COMPONENT_NAMES


def check(step_out, expected):
    """Listed components match their float32 expression (XLA may fuse a multiply-add, so
    within 1 ulp-ish); every other one is exactly +0.0; the total is bit-equal to the
    left-to-right f32 sum of the components."""
    _, reward, _, info = step_out
    comps = {k: np.float32(v) for k, v in info["reward_components"].items()}
    assert set(info["reward_components"]) == set(NAMES)  # jit returns dict keys sorted
    total = np.float32(0.0)
    for name in NAMES:
        want = np.float32(expected.get(name, 0.0))
        if want == 0:
            assert comps[name].tobytes() == np.float32(0.0).tobytes(), (name, comps[name])
        else:
            assert np.isclose(comps[name], want, rtol=1e-6, atol=1e-7), (name, comps[name], want)
        total = np.float32(total + comps[name])
    assert np.float32(reward).tobytes() == total.tobytes()
    return total


f = np.float32


def test_r1_step_towards_and_away():
    out = run(state({"row": 0, "col": 0}), [0, 1])
    total = check(out[0], {"step_penalty": f(-0.01), "distance_shaping": f(1) * f(0.05)})
    assert np.isclose(total, 0.04)
    assert np.isclose(check(out[1], {"step_penalty": f(-0.01)}), -0.01)


def test_r2_reset_at_two_hp():
    out = run(state({"row": 3, "col": 3, "hp": 2, "energy": 4}, ownedPrograms=[19]), [19])
    total = check(
        out[0],
        {
            "step_penalty": f(-0.01),
            "resource_gain": f(0) * f(0.05) + f(-4) * f(0.05),
            "hp_recovery": f(1.0),
            "program_waste": f(-0.3),
        },
    )
    assert np.isclose(total, 0.49)
    out = run(state({"row": 3, "col": 3, "hp": 1, "energy": 4}, ownedPrograms=[19]), [19])
    assert np.isclose(
        check(
            out[0],
            {"step_penalty": f(-0.01), "resource_gain": f(-4) * f(0.05), "hp_recovery": f(2.0)},
        ),
        1.79,
    )


def test_r3_siphon_from_dominated_position():
    start = state(
        {"row": 2, "col": 2, "dataSiphons": 1},
        blocks=[{"row": 2, "col": 3, "type": "data", "points": 3}],
        resources=[
            {"row": 1, "col": 2, "credits": 1},
            {"row": 2, "col": 5, "credits": 3},
            {"row": 3, "col": 3, "credits": 1},
            {"row": 4, "col": 3, "energy": 2},
        ],
    )
    total = check(
        run(start, [4])[0],
        {
            "step_penalty": f(-0.01),
            "score_gain": f(3) * f(0.5),
            "resource_gain": f(1) * f(0.05) + f(0) * f(0.05),
            "siphon_quality": f(-0.5) * (f(2) * f(0.05) + f(2) * f(0.05)),
        },
    )
    assert np.isclose(total, 1.44)


def test_r4_kill_then_hit():
    enemies = [
        {"type": "virus", "row": 2, "col": 5, "hp": 1},
        {"type": "daemon", "row": 1, "col": 2, "hp": 3},
    ]
    total = check(
        run(state({"row": 2, "col": 2}, enemies=enemies), [3])[0],
        {"step_penalty": f(-0.01), "kills": f(1) * f(0.3), "damage_penalty": f(-1.0)},
    )
    assert np.isclose(total, -0.71)
    enemies[0]["isFromScheduledTask"] = True
    total = check(
        run(state({"row": 2, "col": 2}, enemies=enemies), [3])[0],
        {"step_penalty": f(-0.01), "damage_penalty": f(-1.0)},
    )
    assert np.isclose(total, -1.01)


def test_r5_completing_stage_three():
    out = run(
        state(
            {"row": 4, "col": 5, "hp": 2, "credits": 20, "energy": 10},
            stage=3,
            scheduledTaskInterval=10,
        ),
        [0],
    )
    total = check(
        out[0],
        {
            "step_penalty": f(-0.01),
            "stage_completion": f(4.0),
            "distance_shaping": f(0.05),
            "resource_holding": f(20) * f(0.01) + f(10) * f(0.01),
            "hp_recovery": f(1.0),
        },
    )
    assert np.isclose(total, 5.34)
    assert out[0][0]["stage"] == 4 and not out[0][2]


def test_r6_winning_step():
    out = run(
        state(
            {"row": 4, "col": 5, "hp": 3, "score": 10, "credits": 7, "energy": 3},
            stage=8,
            scheduledTaskInterval=5,
        ),
        [0],
    )
    total = check(
        out[0],
        {
            "step_penalty": f(-0.01),
            "stage_completion": f(100.0),
            "distance_shaping": f(0.05),
            "victory": f(500.0) + f(10) * f(100.0),
            "resource_holding": f(7) * f(0.01) + f(3) * f(0.01),
        },
    )
    reference = -0.01 + 100.0 + 0.05 + 1500.0 + (7 * 0.01 + 3 * 0.01)
    assert abs(float(total) - reference) <= 1e-4 + 1e-6 * abs(reference)
    assert out[0][2] and out[0][0]["gameWon"] and out[0][0]["stage"] == 8


def test_r7_killed_by_siphon_enemy_on_stage_three():
    enemies = [{"type": "virus", "row": 2, "col": 3, "hp": 2, "spawnedFromSiphon": True}]
    out = run(
        state(
            {"row": 2, "col": 2, "hp": 1, "energy": 1}, stage=3, ownedPrograms=[10], enemies=enemies
        ),
        [10],
    )
    total = check(
        out[0],
        {
            "step_penalty": f(-0.01),
            "death_penalty": -f(3.0) * f(0.5),
            "resource_gain": f(-1) * f(0.05),
            "damage_penalty": f(-1.0),
            "siphon_death_penalty": f(-10.0),
        },
    )
    assert np.isclose(total, -12.56) and out[0][2]
    out = run(
        state({"row": 2, "col": 2, "hp": 1, "energy": 1}, ownedPrograms=[10], enemies=enemies), [10]
    )
    assert np.isclose(
        check(
            out[0],
            {
                "step_penalty": f(-0.01),
                "resource_gain": f(-1) * f(0.05),
                "damage_penalty": f(-1.0),
                "siphon_death_penalty": f(-10.0),
            },
        ),
        -11.06,
    )


def test_zero_death_penalty_is_positive_zero():
    enemies = [{"type": "virus", "row": 2, "col": 3, "hp": 2}]
    out = run(
        state({"row": 2, "col": 2, "hp": 1, "energy": 1}, ownedPrograms=[10], enemies=enemies), [10]
    )
    assert np.signbit(np.float32(out[0][3]["reward_components"]["death_penalty"])) == np.False_
