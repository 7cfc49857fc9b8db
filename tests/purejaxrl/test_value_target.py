"""`--value-target` (training.md §2.6): the value head learns the return or its symlog."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import standin_env
from conftest import first_rollout, rollout_config, standin_run

from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl.train import make_train
from hackmatrix.purejaxrl.value_target import make_value_scale, symexp, symlog


def test_flag_defaults_to_raw_and_refuses_other_scales():
    parse = cfg.build_parser().parse_args
    assert cfg.config_from_args(parse([])).value_target == "raw"
    config = cfg.config_from_args(parse(["--value-target", "symlog"]))
    cfg.validate(config)
    assert config.value_target == "symlog"
    with pytest.raises(ValueError, match="--value-target must be raw or symlog, got 'log'"):
        cfg.validate(cfg.config_from_args(parse(["--value-target", "log"])))
    with pytest.raises(ValueError, match="--value-target must be raw or symlog"):
        make_value_scale("log")


def test_symlog_is_odd_near_linear_at_zero_and_undone_by_symexp():
    x = jnp.array([-600.0, -4.0, -1e-3, 0.0, 1e-3, 1.0, np.e - 1, 600.0], jnp.float32)
    y, x = np.asarray(symlog(x)), np.asarray(x)
    np.testing.assert_allclose(y, -symlog(-x))
    assert float(y[3]) == 0.0
    np.testing.assert_allclose(y[[2, 4]], x[[2, 4]], rtol=1e-3)  # ~ x near 0
    np.testing.assert_allclose(y[6], 1.0, rtol=1e-6)
    np.testing.assert_allclose(y[7], np.log(601.0), rtol=1e-6)  # a win's return -> 6.4
    np.testing.assert_allclose(symexp(jnp.asarray(y)), x, rtol=1e-5, atol=1e-6)


def test_raw_passes_every_array_through_untouched():
    scale = make_value_scale("raw")
    x = jnp.arange(3.0)
    assert scale.to_value(x) is x and scale.to_head(x) is x


@pytest.fixture(scope="module")
def symlog_trainer_and_rollout():
    trainer = make_train(rollout_config(num_steps=8, value_target="symlog"), standin_env)
    runner = trainer.init(jax.random.PRNGKey(5))
    traj, _ = jax.device_get(first_rollout(trainer, jax.random.PRNGKey(5)))
    return trainer, runner, traj


def test_the_rollout_keeps_values_in_return_units(symlog_trainer_and_rollout):
    trainer, runner, traj = symlog_trainer_and_rollout
    params = runner.train_state.params
    _, head = trainer.network.apply(params, jnp.asarray(traj.obs[0]))
    np.testing.assert_allclose(traj.value[0], symexp(head), rtol=1e-6, atol=1e-7)


def test_the_value_loss_is_taken_against_the_symlog_of_the_targets(symlog_trainer_and_rollout):
    trainer, runner, traj = symlog_trainer_and_rollout
    params = runner.train_state.params
    phases = trainer.phases
    flat = jax.tree_util.tree_map(lambda x: x.reshape((-1,) + x.shape[2:]), traj)
    obs = jnp.asarray(flat.obs)
    targets = jnp.linspace(-20.0, 600.0, obs.shape[0])  # large returns, as late stages give
    advantages = jnp.ones(obs.shape[0])
    _, aux = phases["loss_fn"](params, (flat, advantages, targets))
    _, head = trainer.network.apply(params, obs)
    expected = 0.5 * jnp.mean((head - symlog(targets)) ** 2)
    np.testing.assert_allclose(aux["train/vf_loss"], expected, rtol=1e-5)
    assert float(aux["train/vf_loss"]) < 0.5 * float(jnp.mean(targets**2)) / 100


def test_the_flag_is_shown_stored_and_kept_on_resume(tmp_path, capsys):
    from test_program_levers_delay import resume_standin

    from hackmatrix.purejaxrl.checkpoint import stored_config

    standin_run(tmp_path, "symlog", 2, "--value-target", "symlog")
    assert "value_target" in capsys.readouterr().out  # the configuration table
    resume_standin(tmp_path / "symlog" / "checkpoint_2.pkl", 4)
    assert "continuing the checkpoint's value_target=symlog" in capsys.readouterr().out
    assert stored_config(tmp_path / "symlog" / "final_params.npz")["value_target"] == "symlog"
    # A given scale replaces the checkpoint's, with a note that the head relearns it.
    resume_standin(
        tmp_path / "symlog" / "checkpoint_4.pkl", 6, "--value-target", "raw", "--vf-coef", "0.1"
    )
    out = capsys.readouterr().out
    assert "Note: value target (the head relearns its scale) changes from symlog to raw" in out
    # ...and its layer starts from zero rather than reading symlog values as returns.
    assert "learns on raw: its layer starts from zero (V = 0)" in out
    # A PPO coefficient given on a resume changes the checkpoint's, said aloud; the others
    # continue the checkpoint's.
    assert "Note: value-loss coefficient changes from 0.5 to 0.1" in out
    assert "Note: entropy coefficient changes" not in out
    assert stored_config(tmp_path / "symlog" / "final_params.npz")["value_target"] == "raw"
