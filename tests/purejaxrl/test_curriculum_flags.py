"""Curriculum-start flags (training.md §1.7).

Parsing, named curricula, checks, the anneal schedule, resume.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import standin_env

from hackmatrix import jax_env
from hackmatrix.purejaxrl import cli
from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl import curriculum_flags as cf
from hackmatrix.purejaxrl.resolve import resolve_command_line


def config_of(*argv):
    return cfg.config_from_args(cfg.build_parser().parse_args(list(argv)))


def test_no_flags_means_canonical_starts():
    assert cf.resolve(config_of()) is None
    params = cf.env_params_for(jax_env, None, 0.0)
    assert all(
        np.array_equal(a, b)
        for a, b in zip(jax.tree.leaves(params), jax.tree.leaves(jax_env.EnvParams()))
    )


def test_preset_with_a_field_overridden():
    curriculum = cf.resolve(
        config_of(
            "--curriculum", "mixed", "--curriculum-programs", "23", "--curriculum-stages", "2:1,8:3"
        )
    )
    assert curriculum.programs == (23, 23)
    assert curriculum.stage_weights == (0, 1, 0, 0, 0, 0, 0, 3)
    assert curriculum.credits == (0, 20) and curriculum.data_siphons == (0, 2)  # from the preset
    assert (curriculum.p0, curriculum.anneal) == (1.0, None)


def test_a_single_field_flag_starts_a_curriculum_at_stage_one():
    curriculum = cf.resolve(config_of("--curriculum-energy", "5-9"))
    assert curriculum.stage_weights == (1, 0, 0, 0, 0, 0, 0, 0)
    assert (curriculum.energy, curriculum.programs, curriculum.credits) == ((5, 9), (0, 0), (0, 0))


def test_pending_transmissions_reach_the_game_params():
    curriculum = cf.resolve(
        config_of("--curriculum-transmissions", "1-4", "--curriculum-p0", "0.25")
    )
    assert curriculum.transmissions == (1, 4) and curriculum.programs == (0, 0)
    assert "transmissions=1-4" in curriculum.describe()
    params = cf.env_params_for(jax_env, curriculum, 0.25)
    assert params.curriculum_transmissions.tolist() == [1, 4]
    # The presets ask for none.
    for name in cf.PRESETS:
        assert cf.resolve(config_of("--curriculum", name)).transmissions == (0, 0)


def test_every_preset_resolves_and_builds_env_params():
    for name in cf.PRESETS:
        curriculum = cf.resolve(config_of("--curriculum", name))
        params = cf.env_params_for(jax_env, curriculum, 0.5)
        assert float(params.curriculum_prob) == 0.5
        assert np.allclose(params.curriculum_stage_weights, curriculum.stage_weights)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--curriculum-stages", "9:1"], "stages 1..8"),
        (["--curriculum-stages", "1:0,2:0"], "positive weight"),
        (["--curriculum-stages", "1:-1"], "finite and >= 0"),
        (["--curriculum-stages", "1:x"], "not a number"),
        (["--curriculum-stages", "1:1,1:2"], "given twice"),
        (["--curriculum-stages", "1"], "STAGE:WEIGHT"),
        (["--curriculum-programs", "24"], "at most 23"),
        (["--curriculum-credits", "9-3"], "empty"),
        (["--curriculum-energy", "-2"], "non-negative integers"),
        (["--curriculum-data-siphons", "a-b"], "non-negative integers"),
        (["--curriculum-transmissions", "2-36"], "at most 35"),
        (["--curriculum", "mixed", "--curriculum-p0", "1.5"], "--curriculum-p0"),
        (["--curriculum", "mixed", "--curriculum-anneal", "0"], "--curriculum-anneal"),
        (["--curriculum", "mixed", "--curriculum-anneal", "1.2"], "--curriculum-anneal"),
        (["--curriculum-anneal", "0.5"], "need a curriculum"),
        (["--curriculum-p0", "0.5"], "need a curriculum"),
    ],
)
def test_bad_values_fail_in_validate_naming_the_flag(argv, message):
    with pytest.raises(ValueError, match=message):
        cfg.validate(config_of(*argv))


def test_bad_flag_is_a_clear_error_before_anything_is_built(capsys, tmp_path):
    code = cli.main(
        ["--curriculum-programs", "3-30", "--checkpoint-dir", str(tmp_path), "--no-wandb"]
    )
    assert code == 2
    assert "--curriculum-programs: at most 23" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_game_bounds_are_checked_by_the_game():
    curriculum = cf.resolve(config_of("--curriculum-credits", "0-999995"))
    with pytest.raises(ValueError, match="credits range"):
        cf.env_params_for(jax_env, curriculum, 1.0)


def test_a_game_without_curriculum_starts_is_refused():
    curriculum = cf.resolve(config_of("--curriculum", "late"))
    with pytest.raises(ValueError, match="no curriculum starts"):
        cf.env_params_for(standin_env, curriculum, 1.0)


def test_anneal_schedule_falls_linearly_to_zero():
    curriculum = cf.resolve(
        config_of("--curriculum", "mixed", "--curriculum-p0", "0.8", "--curriculum-anneal", "0.5")
    )
    probabilities = [curriculum.probability(u, 100) for u in (0, 25, 49, 50, 99)]
    assert probabilities == pytest.approx([0.8, 0.4, 0.016, 0.0, 0.0])
    constant = cf.resolve(config_of("--curriculum", "mixed", "--curriculum-p0", "0.3"))
    assert constant.probability(0, 10) == constant.probability(9, 10) == 0.3


def test_resume_without_curriculum_flags_continues_the_stored_curriculum():
    stored = config_of("--curriculum", "late", "--curriculum-anneal", "0.25").to_dict()
    resumed = resolve_command_line([], stored)
    config = resumed.config
    assert config.curriculum == "late" and config.curriculum_anneal == 0.25
    assert any(line.startswith("Curriculum: continuing the checkpoint's") for line in resumed.lines)
    # Any curriculum flag on the command line decides instead, for the whole curriculum.
    resumed = resolve_command_line(["--curriculum-programs", "2"], stored)
    assert resumed.config.curriculum is None and resumed.config.curriculum_programs == "2"
    assert resumed.config.curriculum_anneal is None
    assert not any(line.startswith("Curriculum:") for line in resumed.lines)
    # Pending transmissions are part of the stored curriculum too.
    stored = config_of("--curriculum-transmissions", "2-3").to_dict()
    assert cf.resolve(resolve_command_line([], stored).config).transmissions == (2, 3)
    # A checkpoint from before curricula existed changes nothing.
    resumed = resolve_command_line([], {"num_envs": 64})
    assert cf.resolve(resumed.config) is None
    assert not any(line.startswith("Curriculum:") for line in resumed.lines)


def test_a_new_probability_does_not_recompile_the_reset():
    """The probability is a traced array of one dtype: annealing reuses the compiled function."""
    curriculum = cf.resolve(config_of("--curriculum", "late"))
    reset_where = jax.jit(jax_env.reset_where)
    obs, states = jax.jit(jax.vmap(jax_env.reset_from_seed, in_axes=(0, None)))(
        jnp.arange(8, dtype=jnp.uint32), None
    )
    done = jnp.ones(8, bool)
    stages, cache_sizes = [], []
    for probability in (0.0, 1.0):
        params = cf.env_params_for(jax_env, curriculum, probability)
        _, new = reset_where(jax.random.PRNGKey(1), done, obs, states, params)
        stages.append(np.asarray(new.stage))
        # The size after each call, not an absolute count: jit wrappers of one function may share
        # a cache, so other tests in this process can have added entries of other shapes.
        cache_sizes.append(reset_where._cache_size())
    assert cache_sizes[0] == cache_sizes[1]
    assert np.all(stages[0] == 1) and np.all(stages[1] >= 5)
