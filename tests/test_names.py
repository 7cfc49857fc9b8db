"""The one home of the game's names and sizes agrees with both engines and every user."""

from __future__ import annotations

import json
import subprocess

import numpy as np

from hackmatrix import names


def test_sizes_add_up():
    assert names.ACTION_COUNT == 28
    assert names.OBS_SIZE == 1545 == 10 + 23 + 6 * 6 * 42
    assert len(names.PROGRAM_COSTS) == names.NUM_PROGRAMS == len(names.Program) == 23
    assert [p.action for p in names.Program] == list(range(5, 28))
    assert names.Program.SIPH_PLUS.spelling == "siph+"
    assert names.action_name(names.Program.RESET.action) == "reset"
    assert set(names.PROGRAM_ALIASES.values()) <= set(names.PROGRAM_NAMES)
    assert not set(names.PROGRAM_ALIASES) & set(names.PROGRAM_NAMES)


def test_jax_engine_uses_the_same_names():
    from hackmatrix.jax_env import constants as c

    assert c.NUM_ACTIONS == names.ACTION_COUNT
    assert c.NUM_PROGRAMS == names.NUM_PROGRAMS
    assert tuple(c.PROGRAM_NAMES) == names.PROGRAM_NAMES
    assert tuple(c.REWARD_COMPONENT_NAMES) == names.REWARD_COMPONENT_NAMES
    assert tuple(c.STAGE_TABLE) == names.STAGE_TABLE
    assert tuple(c.ENEMY_TYPE_NAMES) == names.ENEMY_TYPES
    assert tuple(c.ENEMY_MAX_HP.tolist()) == names.ENEMY_MAX_HP
    costs = tuple(zip(c.PROGRAM_CREDITS.tolist(), c.PROGRAM_ENERGY.tolist()))
    assert costs == names.PROGRAM_COSTS
    assert (c.RUNNING, c.DIED, c.WON) == tuple(names.Outcome)
    assert (c.VIRUS, c.DAEMON, c.GLITCH, c.CRYPTOG) == tuple(names.EnemyType)


def test_jax_engine_observation_size():
    import jax

    from hackmatrix.jax_env import env as jax_env_module
    from hackmatrix.jax_env import reset

    obs, _ = reset(jax.random.PRNGKey(0))
    assert np.shape(obs) == (names.OBS_SIZE,)
    assert jax_env_module.HackMatrixEnv.observation_size == names.OBS_SIZE
    assert jax_env_module.HackMatrixEnv.num_actions == names.ACTION_COUNT


def test_every_other_user_agrees():
    from hackmatrix.purejaxrl import network
    from hackmatrix.render import names as render_names
    from parity import names as parity_names

    assert network.OBS_SIZE == names.OBS_SIZE and network.NUM_ACTIONS == names.ACTION_COUNT
    # the render and parity helpers spell the shared names their own way
    assert tuple(render_names.ENEMY_MAX_HP) == names.ENEMY_TYPES
    assert tuple(render_names.ENEMY_MAX_HP.values()) == names.ENEMY_MAX_HP
    assert tuple(a.lower() for a in parity_names.ACTION_NAMES) == names.ACTION_NAMES
    assert parity_names.flat_index_name(names.OBS_SIZE - 1).startswith("grid[5,5,41]")
    from parity import scenarios

    assert [getattr(scenarios, p.name) for p in names.Program] == [p.action for p in names.Program]
    assert scenarios.enemy("daemon", 0, 0)["hp"] == names.ENEMY_MAX_HP[names.EnemyType.DAEMON]


def test_swift_engine_spells_the_same(swift_binary):
    out = subprocess.run(
        [str(swift_binary), "--headless-cli"],
        input=b'{"action": "hello"}\n',
        capture_output=True,
        timeout=60,
        check=True,
    ).stdout
    hello = json.loads(out.splitlines()[0])
    assert hello["actionCount"] == names.ACTION_COUNT
    assert hello["observationShapes"]["flat"] == [names.OBS_SIZE]
    assert hello["observationShapes"]["grid"] == [6, 6, names.CELL_FEATURES]
    assert tuple(hello["rewardComponents"]) == names.REWARD_COMPONENT_NAMES
