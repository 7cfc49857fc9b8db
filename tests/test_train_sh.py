"""train.sh's defaults: the flags it adds are valid trainer flags, and its documented rules
(a later flag wins, a reward flag replaces the staged reward, a resume adds PPO's
coefficients but neither the network nor the reward) hold. The script runs with its set-up
and its final `exec` swapped for a print of the argument list it would pass, so nothing is
installed or trained."""

import subprocess
from pathlib import Path

import pytest

from hackmatrix.purejaxrl import config as cfg

ROOT = Path(__file__).resolve().parents[1]
SETUP_LINE = "source python/scripts/setup_env.sh"
EXEC_PREFIX = 'exec .venv/bin/python python/scripts/train_purejaxrl.py "${defaults[@]}" "$@"'


@pytest.fixture(scope="module")
def dry_train_sh(tmp_path_factory):
    text = (ROOT / "python/scripts/train.sh").read_text()
    assert SETUP_LINE in text and EXEC_PREFIX in text, "train.sh changed shape: update this test"
    text = text.replace(SETUP_LINE, ":").replace(
        EXEC_PREFIX, 'printf "%s\\n" "${defaults[@]}" "$@"'
    )
    script = tmp_path_factory.mktemp("train_sh") / "train.sh"
    script.write_text(text)
    return script


def argv_of(script: Path, *args: str) -> list[str]:
    done = subprocess.run(
        ["bash", str(script), *args], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return done.stdout.splitlines()


def config_of(argv: list[str]) -> cfg.TrainConfig:
    config = cfg.config_from_args(cfg.build_parser().parse_args(argv))
    cfg.validate(config)
    return config


def test_a_fresh_run_gets_a_valid_staged_configuration(dry_train_sh):
    config = config_of(argv_of(dry_train_sh))
    assert config.network == "grid"
    assert (config.ent_coef, config.vf_coef) == (0.05, 0.1)
    assert config.reward_weights  # the siphon priced lighter
    # The program levers wait for the siphon habit (specs/experiments/18-siphon-fork.md to
    # 20-staged-default.md).
    assert config.program_bonus > 0
    assert config.program_levers_from_update > 0


def test_a_later_flag_wins(dry_train_sh):
    config = config_of(
        argv_of(dry_train_sh, "--ent-coef", "0.15", "--vf-coef", "0.5", "--network", "mlp")
    )
    assert (config.ent_coef, config.vf_coef, config.network) == (0.15, 0.5, "mlp")
    assert not config_of(argv_of(dry_train_sh, "--no-siphon-pay-on-use")).siphon_pay_on_use
    assert config_of(argv_of(dry_train_sh, "--ent-coef-programs", "0")).ent_coef_programs == 0


@pytest.mark.parametrize(
    "flag",
    [
        ("--reward-weights", "none"),
        ("--program-bonus", "1"),
        ("--free-program-spending",),
        ("--distance-shaping", "potential"),
    ],
)
def test_any_reward_flag_replaces_the_staged_reward(dry_train_sh, flag):
    argv = argv_of(dry_train_sh, *flag)
    config = config_of(argv)
    given = set(flag)
    for staged in ("--siphon-pay-on-use", "--ent-coef-programs", "--program-levers-from-update"):
        assert staged not in argv or staged in given
    assert config.program_levers_from_update == 0
    assert not config.siphon_pay_on_use
    assert config.ent_coef_programs == 0


def test_a_resume_adds_only_the_ppo_coefficients(dry_train_sh):
    # The network and reward come from the checkpoint; PPO's coefficients from the command line.
    resume = ["--resume", "checkpoints/run/checkpoint_10.pkl"]
    assert argv_of(dry_train_sh, *resume) == ["--ent-coef", "0.05", "--vf-coef", "0.1", *resume]
