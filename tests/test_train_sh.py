"""train.sh is set-up and exec only: the recommended recipe is the trainer's `default` preset,
so `train.sh`, `train_purejaxrl.py` and `hackmatrix-train-jax` (cli.main) resolve the same
configuration for the same arguments. The script runs with its set-up swapped for nothing
and its virtualenv's python for this one, and every command is asked `--print-config`, so
nothing is installed or trained. The rules `train.sh` had when it added the recipe as flags
(a later flag wins, any reward flag replaces the staged reward, a resume keeps the
checkpoint's network and reward) hold for the preset."""

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hackmatrix.purejaxrl import cli
from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl.resolve import resolve_command_line

ROOT = Path(__file__).resolve().parents[1]
TRAIN_SH = ROOT / "python/scripts/train.sh"
TRAINER = ROOT / "python/scripts/train_purejaxrl.py"
SETUP_LINE = "source python/scripts/setup_env.sh"
ROOT_LINE = 'root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"'
EXEC_LINE = 'exec .venv/bin/python python/scripts/train_purejaxrl.py "$@"'
# What train.sh passed before the recipe became the default preset, on a fresh run that
# named neither a network nor a reward option (its last version, commit ce3543c).
OLD_TRAIN_SH_FLAGS = [
    "--ent-coef",
    "0.05",
    "--vf-coef",
    "0.1",
    "--network",
    "grid",
    "--reward-weights",
    "siphon_death_penalty=0.3",
    "--siphon-pay-on-use",
    "--program-bonus",
    "4",
    "--free-program-spending",
    "--ent-coef-programs",
    "0.5",
    "--program-levers-from-update",
    "120",
]
COMMANDS = [
    [],
    ["--total-timesteps", "25000000", "--seed", "1"],  # README's "train longer"
    ["--network", "mlp"],
    ["--reward-weights", "none"],
    ["--preset", "gpu", "--keep-checkpoints", "5"],
    ["--preset", "canonical"],
]


def test_train_sh_is_set_up_and_exec_only():
    lines = [
        line.strip()
        for line in TRAIN_SH.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert lines == ["set -euo pipefail", ROOT_LINE, 'cd "$root"', SETUP_LINE, EXEC_LINE]


@pytest.fixture(scope="module")
def dry_train_sh(tmp_path_factory):
    """train.sh with its set-up skipped, run from the checkout by this python."""
    text = TRAIN_SH.read_text()
    assert all(line in text for line in (SETUP_LINE, ROOT_LINE, EXEC_LINE)), "train.sh changed"
    text = text.replace(SETUP_LINE, ":").replace(ROOT_LINE, f"root={str(ROOT)!r}")
    text = text.replace(".venv/bin/python", sys.executable)
    script = tmp_path_factory.mktemp("train_sh") / "train.sh"
    script.write_text(text)
    return script


def printed(command: list[str]) -> dict:
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT / "python"))
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def in_process(argv: list[str]) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(argv) == 0
    return json.loads(out.getvalue())


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv) or "no flags")
def test_train_sh_and_the_trainer_resolve_the_same_run(dry_train_sh, argv):
    by_train_sh = printed(["bash", str(dry_train_sh), *argv, "--print-config"])
    by_script = printed([sys.executable, str(TRAINER), *argv, "--print-config"])
    by_command = in_process([*argv, "--print-config"])  # hackmatrix-train-jax is cli.main
    assert by_train_sh == by_script == by_command
    assert by_command["config"] == resolve_command_line(argv).config.to_dict()


def test_the_default_preset_is_the_recipe_train_sh_added():
    recipe = resolve_command_line([]).config
    assert recipe == resolve_command_line(["--preset", "canonical", *OLD_TRAIN_SH_FLAGS]).config
    assert recipe.network == "grid" and (recipe.ent_coef, recipe.vf_coef) == (0.05, 0.1)
    # The program levers wait for the siphon habit (specs/experiments/18-siphon-fork.md to
    # 20-staged-default.md).
    assert recipe.program_bonus > 0 and recipe.program_levers_from_update > 0
    cfg.validate(recipe)


def test_a_later_flag_wins():
    config = resolve_command_line(["--ent-coef", "0.15", "--vf-coef", "0.5", "--network", "mlp"])
    assert (config.config.ent_coef, config.config.vf_coef, config.config.network) == (
        0.15,
        0.5,
        "mlp",
    )
    assert config.config.program_bonus == 4  # not a reward flag: the staged reward stays


REWARD_FLAGS = [
    ("--reward-weights", "none"),
    ("--reward-weights", "kills=2"),
    ("--program-bonus", "1"),
    ("--program-use-bonus", "1"),
    ("--free-program-spending",),
    ("--no-free-program-spending",),
    ("--distance-shaping", "potential"),
    # Before the preset these two changed only their own part of train.sh's staged reward;
    # they are reward options like the rest now (docs/results.md, the changelog).
    ("--no-siphon-pay-on-use",),
    ("--ent-coef-programs", "0"),
]


@pytest.mark.parametrize("flag", REWARD_FLAGS, ids=" ".join)
def test_any_reward_flag_replaces_the_staged_reward(flag):
    resolved = resolve_command_line(list(flag))
    canonical = resolve_command_line(["--preset", "canonical", *flag])
    reward = [item.name for item in cfg.OPTIONS if item.spec.section == "reward"]
    assert all(getattr(resolved.config, n) == getattr(canonical.config, n) for n in reward)
    # The rest of the preset stays, and a line says what was dropped.
    assert (resolved.config.network, resolved.config.ent_coef) == ("grid", 0.05)
    assert any("[reward] table is not used" in line for line in resolved.lines)


def test_a_resume_takes_the_run_from_the_checkpoint():
    # A run trained by train.sh before the preset existed (its stored flat dict, without
    # the options added since), resumed with no flag: trained as it was trained, whatever
    # the preset, the options the checkpoint lacks at their defaults.
    stored = resolve_command_line(["--preset", "canonical", *OLD_TRAIN_SH_FLAGS]).config
    stored.num_minibatches = stored.update_epochs = 4  # stored resolved
    old = {k: v for k, v in stored.to_dict().items() if k != "max_episode_steps"}
    for preset in ("default", "canonical", "gpu"):
        resumed = resolve_command_line(["--preset", preset, "--resume", "run"], old)
        assert resumed.config.to_dict() == {
            **stored.to_dict(),
            "num_minibatches": None,  # re-derived by auto-scaling
            "update_epochs": None,
        }
    # A flag on the resume changes that option and only that one.
    resumed = resolve_command_line(["--resume", "run", "--program-bonus", "1"], old).config
    assert (resumed.program_bonus, resumed.siphon_pay_on_use, resumed.network) == (1, True, "grid")
