"""Flags, derived quantities, auto-scaling and device tuning (training.md §1)."""

import pytest

from hackmatrix.purejaxrl import config as cfg


def scaled(num_envs, num_steps=128, argv=()):
    parser = cfg.build_parser()
    args = parser.parse_args(["--num-envs", str(num_envs), "--num-steps", str(num_steps), *argv])
    config = cfg.config_from_args(args)
    report = cfg.auto_scale_for_batch_size(config)
    return config, report


@pytest.mark.parametrize(
    "num_envs, minibatches, mb_size, epochs, grad_steps",
    [
        (256, 4, 8192, 4, 16),
        (512, 8, 8192, 2, 16),
        (1024, 16, 8192, 2, 32),
        (2048, 32, 8192, 2, 64),
        (4096, 64, 8192, 2, 128),
        (8192, 64, 16384, 2, 128),
        (384, 4, 12288, 4, 16),
        (768, 12, 8192, 2, 24),
    ],
)
def test_auto_scale_table(num_envs, minibatches, mb_size, epochs, grad_steps):
    config, _ = scaled(num_envs)
    assert (
        config.num_minibatches,
        config.minibatch_size,
        config.update_epochs,
        config.gradient_steps,
    ) == (minibatches, mb_size, epochs, grad_steps)


def test_longer_rollout_scales_like_the_equal_batch():
    assert (
        scaled(2048, 256)[0].to_dict()["num_minibatches"]
        == scaled(4096, 128)[0].num_minibatches
        == 64
    )


def test_lr_hint_keeps_lr_times_steps_near_4e3():
    _, report = scaled(2048)
    assert report.lr_hint == pytest.approx(6.25e-5)
    assert report.changed
    assert not scaled(256)[1].changed


def test_explicit_minibatches_fix_only_their_dimension():
    config, _ = scaled(2048, argv=["--num-minibatches", "4"])
    assert config.num_minibatches == 4  # an explicit 4 stops the scaling
    assert config.update_epochs == 2  # epochs still auto-scaled


def test_explicit_epochs_fix_only_their_dimension():
    config, _ = scaled(2048, argv=["--update-epochs", "3"])
    assert config.update_epochs == 3  # not divided by the scale factor
    assert config.num_minibatches == 32


def test_flag_defaults_match_the_spec():
    config = cfg.config_from_args(cfg.build_parser().parse_args([]))
    assert (config.num_envs, config.num_steps, config.total_timesteps) == (256, 128, 10_000_000)
    assert (config.lr, config.gamma, config.gae_lambda, config.clip_eps) == (
        2.5e-4,
        0.99,
        0.95,
        0.2,
    )
    assert (config.vf_coef, config.ent_coef, config.max_grad_norm) == (0.5, 0.15, 0.5)
    assert (config.hidden_dim, config.num_layers, config.log_interval, config.seed) == (
        256,
        2,
        10,
        0,
    )
    args = cfg.build_parser().parse_args([])
    assert args.entity is None and args.project == "hackmatrix"
    assert args.save_interval_minutes == 10.0 and args.save_interval is None
    assert args.checkpoint_dir == "checkpoints"


def test_documented_extra_flags_parse():
    args = cfg.build_parser().parse_args(["--wandb", "--learning-rate", "1e-4", "--resume"])
    assert args.lr == 1e-4 and args.resume == cfg.RESUME_LATEST
    assert cfg.build_parser().parse_args(["--resume-run", "abcd1234"]).resume_run == "abcd1234"


def test_explicit_flags_are_detected():
    assert cfg.explicit_flags(["--num-envs", "8", "--learning-rate=1e-3"]) == {"num_envs", "lr"}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--num-envs", "0"], "num-envs must be positive"),
        (["--total-timesteps", "-5"], "total-timesteps must be positive"),
        (["--num-envs", "3", "--num-steps", "5", "--num-minibatches", "4"], "not divisible"),
    ],
)
def test_bad_counts_are_rejected(argv, message):
    config = cfg.config_from_args(cfg.build_parser().parse_args(argv))
    with pytest.raises(ValueError, match=message):
        cfg.validate(config)


def test_budget_is_raised_to_three_updates():
    config = cfg.TrainConfig(num_envs=4, num_steps=8, total_timesteps=40)
    assert "raised" in cfg.enforce_minimum_budget(config)
    assert config.total_timesteps == 96 and config.num_updates == 3
    assert cfg.enforce_minimum_budget(config) is None


def test_cpu_tuning_runs_before_scaling_and_respects_explicit_flags():
    config = cfg.TrainConfig(num_envs=2048)
    changes = cfg.apply_device_tuning(config, "CPU", 1, explicit=set())
    cfg.auto_scale_for_batch_size(config)
    assert changes and config.num_envs == 64 and config.num_minibatches == 2
    kept = cfg.TrainConfig(num_envs=2048)
    cfg.apply_device_tuning(kept, "CPU", 1, explicit={"num_envs"})
    assert kept.num_envs == 2048


def test_tpu_tuning_multiplies_envs_then_scaling_keeps_8192_minibatches():
    config = cfg.TrainConfig(num_envs=512)
    cfg.apply_device_tuning(config, "TPU", 4, explicit=set())
    cfg.auto_scale_for_batch_size(config)
    assert config.num_envs == 2048 and config.minibatch_size == 8192
