"""Fixtures for the trainer tests.

`game_module` is the real `hackmatrix.jax_env` whenever it imports; the small
stand-in game here is used only while the engine is missing, and says so.
"""

import importlib
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

# The one tiny trainer config of these tests (8 envs x 16 steps, 2 updates a
# chunk and a save every 2): runs that share it share their compiles through
# the persistent compilation cache. No evaluation games at the saves:
# test_behaviour.py covers them. The canonical preset: the tests' recipes start from
# the bare option defaults (MLP, the game's own reward), not the recommended recipe.
TINY_FLAGS = [
    "--preset",
    "canonical",
    "--num-envs",
    "8",
    "--num-steps",
    "16",
    "--hidden-dim",
    "32",
    "--log-interval",
    "2",
    "--num-minibatches",
    "2",
    "--update-epochs",
    "2",
    "--no-wandb",
    "--save-interval",
    "2",
    "--eval-episodes",
    "0",
]

# The default preset's staged reward as flags (its [reward] table without the levers' update).
STAGED_REWARD = [
    "--reward-weights",
    "siphon_death_penalty=0.3",
    "--siphon-pay-on-use",
    "--program-bonus",
    "4",
    "--free-program-spending",
    "--ent-coef-programs",
    "0.5",
]
TINY_BATCH = 8 * 16


def game_module_name() -> str:
    forced = os.environ.get("PUREJAXRL_TEST_GAME")  # e.g. "standin_env" while debugging
    if forced:
        return forced
    try:
        importlib.import_module("hackmatrix.jax_env").reset  # noqa: B018
        return "hackmatrix.jax_env"
    except (ImportError, AttributeError):
        return "standin_env"


@pytest.fixture(scope="session")
def game_module():
    name = game_module_name()
    if name == "standin_env":
        print("\n[purejaxrl tests] hackmatrix.jax_env not importable: using the stand-in game")
    return importlib.import_module(name)


def subprocess_env(**extra) -> dict:
    """Environment for trainer subprocesses: CPU, offline W&B, both import roots."""
    env = dict(os.environ)
    env.update(
        JAX_PLATFORMS="cpu",
        WANDB_MODE="offline",
        PYTHONPATH=os.pathsep.join([str(REPO / "python"), str(HERE)]),
    )
    env.update(extra)
    return env


def rollout_config(**overrides):
    """The small resolved trainer config of the rollout tests (8 envs x 32 steps), overridden."""
    from hackmatrix.purejaxrl import config as cfg

    fields = dict(
        num_envs=8, num_steps=32, hidden_dim=32, log_interval=1, num_minibatches=2, update_epochs=1
    )
    config = cfg.TrainConfig(**{**fields, **overrides})
    cfg.auto_scale_for_batch_size(config)
    return config


def schedule_config(num_updates=100, **fields):
    """A validated 8-env x 16-step config lasting `num_updates` updates, for the tests of
    per-update schedules (reward weights, entropy coefficient)."""
    from hackmatrix.purejaxrl import config as cfg

    config = cfg.TrainConfig(
        num_envs=8, num_steps=16, total_timesteps=TINY_BATCH * num_updates, **fields
    )
    cfg.auto_scale_for_batch_size(config)
    cfg.validate(config)
    return config


def standin_run(checkpoint_dir, name, updates, *flags):
    """Train the stand-in game for `updates` tiny updates through the real CLI with `flags`;
    returns the records of metrics.jsonl (the run directory is checkpoint_dir / name)."""
    import json

    from hackmatrix.purejaxrl import cli

    code = cli.main(
        [
            *TINY_FLAGS,
            "--no-episode-gif",
            "--env-module",
            "standin_env",
            "--total-timesteps",
            str(updates * TINY_BATCH),
            *flags,
            "--checkpoint-dir",
            str(checkpoint_dir),
            "--run-name",
            name,
        ]
    )
    assert code == 0
    return [json.loads(line) for line in (checkpoint_dir / name / "metrics.jsonl").open()]


def components_with(name, values):
    """Reward components of len(values) steps, all 0 but `name`, which takes `values`
    (for the tests of one shaping term on hand-made steps)."""
    import jax.numpy as jnp
    import numpy as np

    from hackmatrix.names import REWARD_COMPONENT_NAMES

    components = np.zeros((len(values), len(REWARD_COMPONENT_NAMES)), np.float32)
    components[:, REWARD_COMPONENT_NAMES.index(name)] = values
    return jnp.asarray(components)


def first_rollout(trainer, key):
    """One update's rollout and its metrics, as `update` computes them (no learning step)."""
    import jax

    phases = trainer.phases

    def rollout_and_metrics(runner):
        traj = phases["rollout"](runner)[1]
        return traj, phases["rollout_metrics"](traj)

    return jax.jit(rollout_and_metrics)(trainer.init(key))


def standin_whose_programs_spend():
    """The stand-in game with WAIT and UNDO always offered: a program step charges 0.25 of
    resource_gain, an UNDO step pays 0.25 back, a move pays 0.05 (env reward to match)."""
    import jax.numpy as jnp
    import standin_env

    from hackmatrix.names import FIRST_PROGRAM_ACTION, Program

    program, undo = FIRST_PROGRAM_ACTION, FIRST_PROGRAM_ACTION + Program.UNDO

    def action_mask(state):
        return standin_env.action_mask(state).at[program].set(True).at[undo].set(True)

    def step(key, state, action, params):
        obs, new_state, reward, done, info = standin_env.step(key, state, action, params)
        gain = jnp.where(
            action == undo, 0.25, jnp.where(action >= FIRST_PROGRAM_ACTION, -0.25, 0.05)
        ).astype(jnp.float32)
        info = {**info, "reward_components": {**info["reward_components"], "resource_gain": gain}}
        return obs, new_state, reward + gain, done, info

    return standin_env.variant(action_mask=action_mask, step=step)


def shaper_term(
    flags, names, *, info=None, action=None, components=None, done=None, weights=None, carry=None
):
    """The one shaper `flags` turn on (e.g. {"distance_shaping": "potential"}), applied to one
    hand-made step: returns (term, new carry). `weights` is the f32[15] in force, or None."""
    from hackmatrix.purejaxrl import config as cfg
    from hackmatrix.purejaxrl import shaping

    (shaper,) = shaping.build(cfg.TrainConfig(**flags), names)
    facts = shaping.StepFacts(action, None, components, done, {} if info is None else info)
    return shaper.term(facts, carry, shaping.Levers(weights, None))
