"""`--siphon-pay-on-use` (training.md §1.1): data_siphon pays when a siphon is spent.

The move on hand-made steps (pickup, siphon, UNDO giving siphons back, weights),
then a rollout of the stand-in game whose odd cells hold data-siphon pickups,
then the flag through the CLI (logged, stored, kept on resume).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import standin_env
from conftest import components_with, first_rollout, rollout_config, shaper_term, standin_run

from hackmatrix.names import (
    FIRST_PROGRAM_ACTION,
    SIPHON_ACTION,
    Program,
)
from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl import shaping
from hackmatrix.purejaxrl.train import make_train

NAMES = tuple(standin_env.REWARD_COMPONENT_NAMES)
PICKUP = NAMES.index("data_siphon")
UNDO = FIRST_PROGRAM_ACTION + Program.UNDO
UP, WAIT = 0, FIRST_PROGRAM_ACTION + Program.WAIT


def move(actions, components, held_before, held_after, weights):
    """The shaper's term for steps whose data siphons held go from `held_before` to
    `held_after` (the engine reports the change as info["data_siphons_gained"])."""
    gained = jnp.asarray(held_after, jnp.int32) - jnp.asarray(held_before, jnp.int32)
    return shaper_term(
        {"siphon_pay_on_use": True},
        NAMES,
        action=actions,
        components=components,
        info={"data_siphons_gained": gained},
        weights=weights,
    )[0]


def pickups(flags):
    return components_with("data_siphon", flags)


def test_flag_parses_and_defaults_off():
    parse = cfg.build_parser().parse_args
    assert cfg.config_from_args(parse([])).siphon_pay_on_use is False
    assert cfg.config_from_args(parse(["--siphon-pay-on-use"])).siphon_pay_on_use is True
    assert shaping.build(cfg.TrainConfig(siphon_pay_on_use=False), NAMES) == ()


def test_the_pay_moves_from_the_pickup_to_the_siphon():
    # pickup move, plain move, siphon, UNDO of a siphon (1 back), UNDO of a pickup, a program
    actions = jnp.array([UP, UP, SIPHON_ACTION, UNDO, UNDO, WAIT])
    before = [0, 1, 2, 1, 1, 1]
    after = [1, 1, 1, 2, 0, 1]
    got = move(actions, pickups([1, 0, 0, 0, 0, 0]), before, after, None)
    np.testing.assert_allclose(got, [-1.0, 0.0, 1.0, -1.0, 0.0, 0.0], atol=1e-6)
    # Scaled by the data_siphon weight, fixed or annealed.
    weights = np.ones(len(NAMES), np.float32)
    weights[PICKUP] = 0.5
    scaled = move(actions, pickups([1, 0, 0, 0, 0, 0]), before, after, jnp.asarray(weights))
    np.testing.assert_allclose(scaled, 0.5 * np.asarray(got), atol=1e-6)


def test_no_loop_earns_and_a_spent_siphon_earns_what_a_pickup_did():
    def trained(actions, held, picked):
        """data_siphon as canonically paid plus the move, summed over the steps."""
        comps = pickups(picked)
        moved = move(jnp.array(actions), comps, held[:-1], held[1:], None)
        return float(jnp.sum(comps[:, PICKUP] + moved))

    # Siphon then UNDO (the siphon comes back), twice: nothing earned.
    assert trained([SIPHON_ACTION, UNDO] * 2, [1, 0, 1, 0, 1], [0, 0, 0, 0]) == 0.0
    # Picked up and spent: 1.0, as the canonical pickup pays; picked up and held: 0.
    assert trained([UP, SIPHON_ACTION], [0, 1, 0], [1, 0]) == pytest.approx(1.0)
    assert trained([UP, UP], [0, 1, 1], [1, 0]) == pytest.approx(0.0)


# ------------------------------------------------------------------ a rollout


def standin_with_siphons():
    """The stand-in game where a move onto a cell of odd row + column picks up a data siphon
    (data_siphon 1.0, env reward to match); siphon is offered on even cells, as before."""

    def step(key, state, action, params):
        obs, new_state, reward, done, info = standin_env.step(key, state, action, params)
        moved = (action < 4) & jnp.any(new_state.pos != state.pos)
        picked = (moved & ((new_state.pos[0] + new_state.pos[1]) % 2 == 1)).astype(jnp.float32)
        info = {**info, "reward_components": {**info["reward_components"], "data_siphon": picked}}
        return obs, new_state, reward + picked, done, info

    return standin_env.variant(step=step)


@pytest.fixture(scope="module")
def rollout():
    trainer = make_train(
        rollout_config(num_steps=64, siphon_pay_on_use=True), standin_with_siphons()
    )
    traj, metrics = first_rollout(trainer, jax.random.PRNGKey(4))
    return jax.device_get(traj), jax.device_get(metrics)


def test_the_rollout_trains_on_the_moved_pay(rollout):
    traj, metrics = rollout
    picked = traj.components[..., PICKUP]
    siphoned = (traj.action == SIPHON_ACTION).astype(np.float32)
    assert picked.any() and siphoned.any()
    # The stand-in's observation holds no siphon count and offers no UNDO: nothing given back.
    np.testing.assert_allclose(traj.shaping_terms["siphon_pay_moved"], siphoned - picked, atol=1e-6)
    np.testing.assert_allclose(
        traj.reward, traj.env_reward + traj.shaping_terms["siphon_pay_moved"], atol=1e-6
    )
    assert float(metrics["train/siphon_pay_moved"]) == pytest.approx(
        traj.shaping_terms["siphon_pay_moved"].mean(), abs=1e-6
    )


def test_without_the_flag_nothing_moves():
    trainer = make_train(rollout_config(num_steps=8), standin_with_siphons())
    traj, metrics = jax.device_get(first_rollout(trainer, jax.random.PRNGKey(4)))
    assert traj.shaping_terms == {} and traj.env_reward is None
    assert "train/siphon_pay_moved" not in metrics


# ------------------------------------------------------------------ the CLI


def test_the_flag_is_logged_stored_and_kept_on_resume(tmp_path, capsys):
    from test_program_levers_delay import resume_standin

    from hackmatrix.purejaxrl.checkpoint import stored_config

    records = standin_run(tmp_path, "moved", 2, "--siphon-pay-on-use")
    chunks = [r for r in records if "train/total_loss" in r]
    assert chunks and all("train/siphon_pay_moved" in r for r in chunks)
    assert "siphon_pay_on_use" in capsys.readouterr().out  # the configuration table
    # A resume without the flag keeps it (a given --no-siphon-pay-on-use changes it, as for
    # every reward option: test_program_levers_delay).
    resume_standin(tmp_path / "moved" / "checkpoint_2.pkl", 4)
    assert "continuing the checkpoint's siphon_pay_on_use=True" in capsys.readouterr().out
    assert stored_config(tmp_path / "moved" / "final_params.npz")["siphon_pay_on_use"] is True


def test_an_undo_giving_back_siphons_above_ten_is_charged():
    """The observation's siphon feature saturates at 10 (observation.md §4); the engine's
    info reports the true change, so a siphon-UNDO loop nets 0 at 12 siphons too."""
    jax_env = pytest.importorskip("hackmatrix.jax_env")
    step = jax.jit(jax_env.step)
    block = {"row": 1, "col": 2, "type": "data", "points": 3, "spawnCount": 0}
    state = jax_env.state_from_json(
        {
            "player": {"row": 2, "col": 2, "dataSiphons": 12, "credits": 3, "energy": 5},
            "ownedPrograms": [Program.WAIT.action, Program.UNDO.action],
            "blocks": [block],
        }
    )
    # WAIT and the siphon each end a turn and push a snapshot (game-rules.md §7.10): the
    # first UNDO restores the turn after the siphon, the second the turn before it.
    gained, terms = [], []
    for action in (WAIT, SIPHON_ACTION, UNDO, UNDO):
        _, state, _, _, info = step(None, state, action)
        gained.append(int(info["data_siphons_gained"]))
        comps = jnp.stack([info["reward_components"][n] for n in NAMES])[None]
        terms.append(float(move(jnp.array([action]), comps, [0], [gained[-1]], None)[0]))
    assert gained == [0, -1, 0, 1]  # 12 -> 11 -> 12, all saturated in the observation
    assert terms[3] == pytest.approx(-1.0)  # the siphon given back is charged
    assert sum(terms) == pytest.approx(0.0)
