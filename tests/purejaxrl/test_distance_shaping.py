"""`--distance-shaping potential` (training.md §1.1): a lost cell costs what a gained one pays.

The engine's signed `exit_distance_delta`, the charge built from it, and the
trainer's use of it.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import standin_env
from conftest import first_rollout, rollout_config, shaper_term

from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl import shaping
from hackmatrix.purejaxrl.metrics import aggregate_chunk
from hackmatrix.purejaxrl.train import make_train

NAMES = tuple(standin_env.REWARD_COMPONENT_NAMES)
UP, DOWN = 0, 1  # "up" raises the row (game-rules.md §4)

# ------------------------------------------------------------------- the flag


def test_flag_parses_defaults_to_canonical_and_refuses_others(capsys):
    parse = cfg.build_parser().parse_args
    assert cfg.config_from_args(parse([])).distance_shaping == "canonical"
    assert shaping.build(cfg.TrainConfig(distance_shaping="canonical"), NAMES) == ()
    config = cfg.config_from_args(parse(["--distance-shaping", "potential"]))
    assert config.distance_shaping == "potential"
    with pytest.raises(SystemExit):
        parse(["--distance-shaping", "signed"])
    assert "--distance-shaping" in capsys.readouterr().err
    config.distance_shaping = "signed"
    with pytest.raises(ValueError, match="canonical or potential"):
        cfg.validate(config)


# ------------------------------------------------------ the engine's signed delta


@pytest.fixture(scope="module")
def engine():
    jax_env = pytest.importorskip("hackmatrix.jax_env")
    return jax_env, jax.jit(jax_env.step)


def test_a_step_away_and_back_reads_minus_one_then_plus_one(engine):
    jax_env, step = engine
    # An empty board, exit at (5, 5): from (2, 2) the path is 6 cells.
    state = jax_env.state_from_json({"player": {"row": 2, "col": 2}})
    deltas, shaping, infos = [], [], []
    for action in (DOWN, UP, UP):
        _, state, _, _, info = step(None, state, action)
        infos.append(info)
        deltas.append(int(info["exit_distance_delta"]))
        shaping.append(float(info["reward_components"]["distance_shaping"]))
    assert deltas == [-1, 1, 1]
    assert shaping == pytest.approx([0.0, 0.05, 0.05])  # the canonical term: the loop pays
    names = tuple(jax_env.REWARD_COMPONENT_NAMES)

    def charge(info, weights):
        return shaper_term({"distance_shaping": "potential"}, names, info=info, weights=weights)[0]

    charged = [float(charge(info, None)) for info in infos]
    assert charged == pytest.approx([-0.05, 0.0, 0.0])  # with it the round trip nets 0
    weights = np.ones(len(jax_env.REWARD_COMPONENT_NAMES), np.float32)
    weights[jax_env.REWARD_COMPONENT_NAMES.index("distance_shaping")] = 2.0
    assert float(charge(infos[0], jnp.asarray(weights))) == pytest.approx(-0.1)


def test_a_rejected_action_reads_zero(engine):
    jax_env, step = engine
    state = jax_env.state_from_json({"player": {"row": 0, "col": 0}})
    _, _, _, _, info = step(None, state, DOWN)  # off the board: masked
    assert bool(info["invalid_action"]) and int(info["exit_distance_delta"]) == 0


def test_a_game_module_without_the_delta_gets_a_clear_error():
    with pytest.raises(ValueError, match="exit_distance_delta"):
        shaper_term({"distance_shaping": "potential"}, NAMES, info={"stage": 1})


# ------------------------------------------------------------------ the trainer


def standin_with_a_distance_delta():
    """The stand-in game with a signed delta: +1 on action 1, -1 on any other."""

    def step(key, state, action, params):
        obs, state, reward, done, info = standin_env.step(key, state, action, params)
        return (
            obs,
            state,
            reward,
            done,
            {**info, "exit_distance_delta": jnp.where(action == 1, 1, -1)},
        )

    return standin_env.variant(step=step)


def test_trained_reward_is_the_env_reward_plus_the_retreat_charge():
    config = rollout_config(distance_shaping="potential")
    trainer = make_train(config, standin_with_a_distance_delta())
    traj, metrics = first_rollout(trainer, jax.random.PRNGKey(1))
    traj = jax.device_get(traj)
    expected = np.where(traj.action == 1, 0.0, -0.05).astype(np.float32)
    np.testing.assert_array_equal(traj.shaping_terms["distance_retreat"], expected)
    np.testing.assert_allclose(traj.reward, traj.env_reward + expected, atol=1e-6)
    assert 0 < np.sum(traj.action == 1) < traj.action.size  # both signs were exercised
    metrics = aggregate_chunk(
        jax.tree_util.tree_map(lambda x: np.asarray(x)[None], jax.device_get(metrics)), 1
    )
    assert metrics["train/distance_retreat"] == pytest.approx(expected.mean(), abs=1e-6)
    # reward/* and the canonical return stay the env's own
    assert metrics["train/mean_reward"] == pytest.approx(traj.env_reward.mean(), abs=1e-6)
