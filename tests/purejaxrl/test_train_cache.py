"""make_train returns the trainer it already built for an equal request (train.py's cache)."""

import dataclasses

import jax
import pytest
from conftest import rollout_config

from hackmatrix.purejaxrl import train as train_module
from hackmatrix.purejaxrl.train import RUN_ONLY_FIELDS, TRAINER_CACHE_SIZE, make_mesh, make_train


def test_an_equal_request_returns_the_built_trainer_with_the_callers_config(game_module):
    first = make_train(rollout_config(total_timesteps=1_000, seed=3), game_module)
    config = rollout_config(total_timesteps=5_000, seed=4)
    second = make_train(config, game_module)
    assert second.train_chunk is first.train_chunk and second.init is first.init
    assert second.config is config and second.config.num_updates == 5_000 // 256


CHANGES = [dict(ent_coef=0.3), dict(reward_weights={"stage_completion": 2.0}), dict(network="grid")]


@pytest.mark.parametrize("change", CHANGES)
def test_a_setting_the_trainer_reads_builds_a_new_one(game_module, change):
    base = make_train(rollout_config(), game_module)
    other = make_train(rollout_config(**change), game_module)
    assert other.train_chunk is not base.train_chunk


def test_other_env_params_or_devices_build_a_new_trainer(game_module):
    config = rollout_config()
    base = make_train(config, game_module)
    equal = game_module.EnvParams()  # a new object with the same values
    assert make_train(config, game_module, equal).train_chunk is base.train_chunk
    leaves, treedef = jax.tree_util.tree_flatten(game_module.EnvParams())
    if leaves:  # the real game: a different value of one leaf is another request
        changed = jax.tree_util.tree_unflatten(treedef, [leaves[0] + 1, *leaves[1:]])
        assert make_train(config, game_module, changed).train_chunk is not base.train_chunk
    mesh = make_mesh(jax.devices()[:1])
    assert make_train(config, game_module, mesh=mesh).train_chunk is base.train_chunk


def test_the_cache_keeps_only_the_newest_trainers(game_module):
    rates = [1e-4 * (i + 1) for i in range(TRAINER_CACHE_SIZE + 1)]
    built = [make_train(rollout_config(lr=lr), game_module) for lr in rates]
    assert len(train_module._TRAINERS) == TRAINER_CACHE_SIZE
    again = make_train(rollout_config(lr=rates[0]), game_module)  # the oldest, dropped
    assert again.train_chunk is not built[0].train_chunk
    newest = make_train(rollout_config(lr=rates[-1]), game_module)
    assert newest.train_chunk is built[-1].train_chunk


class RecordingConfig(train_module.TrainConfig):
    """A config that notes which run-only settings are read."""

    def __getattribute__(self, name):
        if name in RUN_ONLY_FIELDS:
            object.__getattribute__(self, "__dict__").setdefault("reads", set()).add(name)
        return super().__getattribute__(name)


@pytest.fixture(scope="module")
def traced_with_every_lever(game_module):
    """A trainer with every lever on, built from a recording config and its chunk traced:
    (the run-only settings read, the fresh runner's types, the chunk's output types)."""
    config = RecordingConfig(
        **dataclasses.asdict(
            rollout_config(
                reward_weights={"stage_completion": 2.0},
                reward_weights_anneal=0.5,
                program_bonus=1.0,
                program_use_bonus=1.0,
                free_program_spending=True,
                siphon_pay_on_use=True,
                program_levers_from_update=3,
                ent_coef_programs=0.1,
                ent_coef_anneal=0.5,
                ent_coef_final=0.01,
                value_target="symlog",
                max_episode_steps=50,
                distance_shaping="potential",
            )
        )
    )
    config.__dict__.pop("reads", None)
    trainer = train_module._build_trainer(
        config, game_module, game_module.EnvParams(), make_mesh(jax.devices()[:1])
    )
    runner = jax.eval_shape(trainer.init, jax.random.PRNGKey(0))
    after, _ = jax.eval_shape(trainer.train_chunk, runner, 1)
    return config.__dict__.get("reads", set()), runner, after


def test_building_and_tracing_never_read_the_run_only_settings(traced_with_every_lever):
    """What makes sharing a trainer across them safe."""
    reads, _, _ = traced_with_every_lever
    assert reads == set()


def test_no_runner_leaf_is_weakly_typed(traced_with_every_lever):
    """A runner restored from a checkpoint (numpy arrays, never weakly typed) then has the
    fresh runner's types, so a resume reuses the compiled chunk instead of tracing anew."""
    _, runner, after = traced_with_every_lever
    for name, tree in (("fresh", runner), ("after a chunk", after)):
        weak = [
            jax.tree_util.keystr(path)
            for path, leaf in jax.tree_util.tree_leaves_with_path(tree)
            if leaf.weak_type
        ]
        assert weak == [], (name, weak)
