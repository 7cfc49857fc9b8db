"""`--program-bonus` (training.md §1.1): a trainer-side reward for taking a program into hand."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import standin_env
from conftest import first_rollout, rollout_config

from hackmatrix.names import Program
from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl.metrics import aggregate_chunk
from hackmatrix.purejaxrl.network import OBS_SIZE, PLAYER_SIZE, PROGRAMS_SIZE
from hackmatrix.purejaxrl.resolve import resolve_command_line
from hackmatrix.purejaxrl.shaping import program_bonus
from hackmatrix.purejaxrl.shaping.program_bonus import bonus_term
from hackmatrix.purejaxrl.train import make_train


def owned_program_count(obs):
    """Programs in hand, read from the flat observation's 0/1 program vector."""
    return obs[..., PLAYER_SIZE : PLAYER_SIZE + PROGRAMS_SIZE].sum(axis=-1)


def facts_between(before, after, died=None):
    """The engine's info for steps from observations `before` to `after` (the programs in
    hand each shows), as a game module reports it."""
    owned = slice(PLAYER_SIZE, PLAYER_SIZE + PROGRAMS_SIZE)
    info = {"programs_gained": (after[..., owned] - before[..., owned]).astype(jnp.int32)}
    if died is not None:
        info["died"] = died
    return info


# ------------------------------------------------------------------- the flag


def test_flag_parses_and_defaults_to_off():
    parser = cfg.build_parser()
    assert cfg.config_from_args(parser.parse_args([])).program_bonus == 0.0
    assert cfg.config_from_args(parser.parse_args(["--program-bonus", "0.5"])).program_bonus == 0.5
    assert program_bonus.make(cfg.TrainConfig(), ()) is None


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_bonus_is_refused(value):
    config = cfg.config_from_args(cfg.build_parser().parse_args([f"--program-bonus={value}"]))
    with pytest.raises(ValueError, match="--program-bonus must be a finite number"):
        cfg.validate(config)


def test_bad_flag_value_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit):
        cfg.build_parser().parse_args(["--program-bonus", "lots"])
    assert "--program-bonus" in capsys.readouterr().err


# ------------------------------------------------- the bonus on the real game


@pytest.fixture(scope="module")
def engine():
    jax_env = pytest.importorskip("hackmatrix.jax_env")
    step = jax.jit(jax_env.step)
    observe = jax.jit(lambda s: jax_env.flatten_observation(jax_env.observe(s)))
    return jax_env, step, observe


def observations_of_a_siphon_taken_back(engine, block):
    """The observations of WAIT, a siphon draining `block`, and two UNDOs (game-rules.md §6).

    The player stands at (2, 2) owning UNDO and WAIT. WAIT and the siphon each end a turn
    and push a snapshot (§7.10); the first UNDO restores the turn after the siphon, the
    second the turn before it.
    """
    jax_env, step, observe = engine
    undo, wait = Program.UNDO.action, Program.WAIT.action
    start = jax_env.state_from_json(
        {
            "player": {"row": 2, "col": 2, "dataSiphons": 1, "credits": 3, "energy": 5},
            "ownedPrograms": [wait, undo],
            "blocks": [block],
        }
    )
    states, infos = [start], []
    for action in (wait, 4, undo, undo):
        _, state, _, _, info = step(None, states[-1], action)
        states.append(state)
        infos.append(info)
    return [observe(s) for s in states], infos


def bonus_per_step(bonus, infos):
    paid = jax.jit(bonus)
    return [float(paid(info)) for info in infos]


def test_a_siphoned_program_pays_the_bonus_and_undo_takes_it_back(engine):
    show = {"row": 1, "col": 2, "type": "program", "programType": "show", "spawnCount": 0}
    obs, infos = observations_of_a_siphon_taken_back(engine, show)
    assert [float(owned_program_count(o)) for o in obs] == [2.0, 2.0, 3.0, 3.0, 2.0]
    paid = bonus_per_step(bonus_term(0.75), infos)
    assert paid == [0.0, 0.75, 0.0, -0.75]  # the pick-up cannot be farmed through UNDO


# ------------------------------------------------------------------ the trainer


def standin_owning_program_0(owns):
    """The stand-in game, where the player 'owns' program 0 while `owns(state, died)` holds."""

    def with_program(obs, state, died):
        return obs.at[10].set(owns(state, died).astype(jnp.float32))

    def reset(key, params):
        obs, state = standin_env.reset(key, params)
        return with_program(obs, state, False), state

    def step(key, state, action, params):
        held = owns(state, False).astype(jnp.int32)
        obs, state, reward, done, info = standin_env.step(key, state, action, params)
        gained = owns(state, info["died"]).astype(jnp.int32) - held
        info = {**info, "programs_gained": info["programs_gained"].at[0].set(gained)}
        return with_program(obs, state, info["died"]), state, reward, done, info

    return standin_env.variant(reset=reset, step=step)


def standin_with_a_program_in_the_lower_half():
    """Program 0 while in rows 3-5: walking down pays the bonus, walking back up takes it
    back, and a stage change (back to row 0) takes it back too: both signs in a short rollout.
    """
    return standin_owning_program_0(lambda state, died: state.pos[0] >= 3)


@pytest.fixture(scope="module")
def rollout_and_metrics():
    config = rollout_config(num_steps=64, program_bonus=0.5)
    trainer = make_train(config, standin_with_a_program_in_the_lower_half())
    traj, metrics = first_rollout(trainer, jax.random.PRNGKey(3))
    metrics = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], jax.device_get(metrics))
    return jax.device_get(traj), aggregate_chunk(metrics, 1)


def test_trained_reward_is_the_env_reward_plus_the_bonus(rollout_and_metrics):
    traj, _ = rollout_and_metrics
    np.testing.assert_array_equal(
        traj.reward, traj.env_reward + traj.shaping_terms["program_bonus"]
    )
    owned = traj.obs[..., 10]
    # Within an episode the next step's observation is the one the bonus read.
    within = ~traj.done[:-1]
    expected = 0.5 * (owned[1:] - owned[:-1])
    np.testing.assert_array_equal(
        traj.shaping_terms["program_bonus"][:-1][within], expected[within]
    )
    assert np.any(traj.shaping_terms["program_bonus"] > 0) and np.any(
        traj.shaping_terms["program_bonus"] < 0
    )


def test_trainer_logs_the_bonus_beside_the_canonical_reward(rollout_and_metrics):
    _, metrics = rollout_and_metrics
    assert "train/program_bonus" in metrics
    assert metrics["train/weighted_mean_reward"] == pytest.approx(
        metrics["train/mean_reward"] + metrics["train/program_bonus"], abs=1e-6
    )
    assert "train/mean_weighted_episode_return" in metrics


def test_without_the_flag_nothing_is_shaped():
    config = cfg.TrainConfig(num_envs=4, num_steps=8, hidden_dim=16, num_minibatches=1)
    cfg.auto_scale_for_batch_size(config)
    trainer = make_train(config, standin_env)
    runner = trainer.init(jax.random.PRNGKey(0))
    assert runner.weighted_episode_return is None  # the env's reward is trained on as is


# ------------------------------------------------- --program-bonus-at-death


def test_at_death_flag_parses_defaults_to_pay_and_needs_a_bonus():
    parse = cfg.build_parser().parse_args
    assert cfg.config_from_args(parse([])).program_bonus_at_death == "pay"
    args = parse(["--program-bonus", "1", "--program-bonus-at-death", "withhold"])
    config = cfg.config_from_args(args)
    cfg.validate(config)
    assert config.program_bonus_at_death == "withhold"
    lone = cfg.config_from_args(parse(["--program-bonus-at-death", "withhold"]))
    with pytest.raises(ValueError, match="needs a non-zero --program-bonus"):
        cfg.validate(lone)


def test_a_program_taken_as_the_player_dies_pays_nothing_when_withheld():
    obs = jnp.zeros((4, OBS_SIZE)).at[1:, 10].set(1.0).at[3, 11].set(1.0)
    before, after = obs[jnp.array([0, 0, 1, 3])], obs[jnp.array([1, 1, 3, 1])]
    died = jnp.array([False, True, True, True])  # gain, gain at death, gain at death, loss
    paid = bonus_term(0.5)(facts_between(before, after, died))
    withheld = bonus_term(0.5, "withhold")(facts_between(before, after, died))
    np.testing.assert_allclose(paid, [0.5, 0.5, 0.5, -0.5])
    np.testing.assert_allclose(withheld, [0.5, 0.0, 0.0, -0.5])  # a loss is still charged


def standin_that_hands_a_program_to_the_dying():
    """Program 0 on the lower rows and on dying."""
    return standin_owning_program_0(lambda state, died: (state.pos[0] >= 3) | died)


def test_the_trainer_withholds_the_bonus_on_death_steps_only():
    game = standin_that_hands_a_program_to_the_dying()
    rollouts = {}
    for mode in ("pay", "withhold"):
        config = rollout_config(num_steps=64, program_bonus=0.5, program_bonus_at_death=mode)
        traj, _ = first_rollout(make_train(config, game), jax.random.PRNGKey(3))
        rollouts[mode] = jax.device_get(traj)
    pay, withhold = rollouts["pay"], rollouts["withhold"]
    np.testing.assert_array_equal(pay.action, withhold.action)  # same game, same policy
    # A stage exit takes the program away (row 0), so a fresh one on an ending step is a death.
    gained_at_death = pay.done & (pay.shaping_terms["program_bonus"] > 0)
    assert gained_at_death.any(), "some player should die holding a fresh program"
    np.testing.assert_array_equal(withhold.shaping_terms["program_bonus"][gained_at_death], 0.0)
    np.testing.assert_array_equal(
        withhold.shaping_terms["program_bonus"][~gained_at_death],
        pay.shaping_terms["program_bonus"][~gained_at_death],
    )
    np.testing.assert_array_equal(
        withhold.reward, withhold.env_reward + withhold.shaping_terms["program_bonus"]
    )


# ------------------------------------------------- --program-bonus-scale


def test_scale_flag_parses_defaults_to_flat_and_needs_a_bonus():
    parse = cfg.build_parser().parse_args
    assert cfg.config_from_args(parse([])).program_bonus_scale == "flat"
    config = cfg.config_from_args(
        parse(["--program-bonus", "0.5", "--program-bonus-scale", "spawn-cost"])
    )
    cfg.validate(config)
    assert config.program_bonus_scale == "spawn-cost"
    lone = cfg.config_from_args(parse(["--program-bonus-scale", "spawn-cost"]))
    with pytest.raises(ValueError, match="spawn-cost needs a non-zero --program-bonus"):
        cfg.validate(lone)
    config.program_bonus_scale = "by-rarity"  # e.g. a stale config file
    with pytest.raises(ValueError, match="must be flat or spawn-cost, got 'by-rarity'"):
        cfg.validate(config)


def test_bad_scale_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit):
        cfg.build_parser().parse_args(["--program-bonus-scale", "points"])
    assert "--program-bonus-scale" in capsys.readouterr().err


def test_spawn_cost_scale_pays_each_program_its_blocks_transmissions():
    # game-rules.md §1.6: PUSH's block queues 4 transmissions, WAIT's 1, ATK+'s 8.
    push, wait, atk = (PLAYER_SIZE + int(p) for p in (Program.PUSH, Program.WAIT, Program.ATK_PLUS))
    before = jnp.zeros((4, OBS_SIZE)).at[3, push].set(1.0)
    after = (
        jnp.zeros((4, OBS_SIZE))
        .at[0, push]
        .set(1.0)
        .at[1, wait]
        .set(1.0)
        .at[2, jnp.array([wait, atk])]
        .set(1.0)
    )
    flat = bonus_term(0.5)(facts_between(before, after))
    scaled = bonus_term(0.5, scale="spawn-cost")(facts_between(before, after))
    np.testing.assert_allclose(flat, [0.5, 0.5, 1.0, -0.5])
    np.testing.assert_allclose(scaled, [2.0, 0.5, 4.5, -2.0])  # a loss takes its size back


def test_spawn_cost_scale_on_the_real_game_undo_takes_it_back(engine):
    crash = {"row": 2, "col": 3, "type": "program", "programType": "crash", "spawnCount": 6}
    _, infos = observations_of_a_siphon_taken_back(engine, crash)
    paid = bonus_per_step(bonus_term(0.5, scale="spawn-cost"), infos)
    assert paid == [0.0, 3.0, 0.0, -3.0]  # 0.5 x CRASH's 6 transmissions, and back


def test_the_trainer_pays_the_scaled_bonus():
    # The stand-in hands out program 0 (PUSH, spawn cost 4) on its lower rows.
    config = rollout_config(num_steps=64, program_bonus=0.5, program_bonus_scale="spawn-cost")
    traj, _ = first_rollout(
        make_train(config, standin_with_a_program_in_the_lower_half()), jax.random.PRNGKey(3)
    )
    traj = jax.device_get(traj)
    np.testing.assert_array_equal(
        traj.reward, traj.env_reward + traj.shaping_terms["program_bonus"]
    )
    owned = traj.obs[..., PLAYER_SIZE]
    within = ~traj.done[:-1]
    expected = 2.0 * (owned[1:] - owned[:-1])
    np.testing.assert_array_equal(
        traj.shaping_terms["program_bonus"][:-1][within], expected[within]
    )
    assert np.any(traj.shaping_terms["program_bonus"] == 2.0)


def test_a_resume_keeps_the_checkpoints_scale_unless_flagged():
    stored = {"program_bonus": 0.5, "program_bonus_scale": "spawn-cost"}
    resumed = resolve_command_line([], stored)
    assert (resumed.config.program_bonus, resumed.config.program_bonus_scale) == (0.5, "spawn-cost")
    assert any("program_bonus_scale=spawn-cost" in line for line in resumed.lines)
    flagged = resolve_command_line(["--program-bonus-scale", "flat"], stored)
    assert (flagged.config.program_bonus, flagged.config.program_bonus_scale) == (0.5, "flat")
    # A checkpoint from before the flag is flat, whatever the preset says.
    older = resolve_command_line([], {"program_bonus": 1.0}).config
    assert older.program_bonus_scale == "flat"
