"""One declaration per option, presets, and where each value comes from (training.md §1.8).

The command line and its --help are generated from the option declarations; a preset file is
checked against them; the layers are option defaults < preset < checkpoint < command line,
with the reward and curriculum sections taken as a whole; the flag reference is generated.
Nothing here trains.
"""

import contextlib
import dataclasses
import io
import json
import pickle
from pathlib import Path

import pytest
from conftest import STAGED_REWARD

from hackmatrix.purejaxrl import cli
from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl.options import CHECKPOINT, COMMAND_LINE, DEFAULT
from hackmatrix.purejaxrl.presets import PresetError, load_preset, shipped_names
from hackmatrix.purejaxrl.resolve import (
    config_table,
    flag_reference_markdown,
    parser_with_presets,
    resolve_command_line,
)

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "docs" / "reference" / "trainer-flags.md"


def preset_file(tmp_path, text, name="mine.toml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ------------------------------------------------------------------ the shipped presets


def test_the_shipped_presets():
    assert shipped_names() == [
        "canonical",
        "default",
        "expert-iteration",
        "gpu",
        "search-advantage",
    ]
    assert all(load_preset(name).description for name in shipped_names())
    assert load_preset("canonical").values == {}
    # canonical: today's trainer without flags; every option at its declared default.
    canonical = resolve_command_line(["--preset", "canonical"])
    assert canonical.config == cfg.TrainConfig()
    assert canonical.run == cfg.RunOptions(preset="canonical")
    # gpu: the default recipe at 2,048 envs (extends it, so it follows the default).
    assert load_preset("gpu").values == {
        **load_preset("default").values,
        "num_envs": 2048,
        "total_timesteps": 100_000_000,
        "keep_checkpoints": 3,
    }
    # expert-iteration: the default recipe learned from the search, whose tree adds the
    # reward the value head learns.
    assert load_preset("expert-iteration").values == {
        **load_preset("default").values,
        "algorithm": "expert-iteration",
        "search_simulations": 8,
        "search_tree_reward": "trained",
    }
    # search-advantage: specs/experiments/53's arm, to continue a trained policy (so the
    # default's staged reward with the program levers on from the first update).
    assert load_preset("search-advantage").values == {
        **load_preset("default").values,
        "program_levers_from_update": 0,
        "algorithm": "expert-iteration",
        "search_acting": "network",
        "search_share": 0.125,
        "search_select": "first",  # specs/experiments/66
        "search_ppo_coef": 1.0,
        "search_simulations": 16,
        "search_policy_target": "advantage",
        "search_tree_reward": "env",
        "value_trunk": "separate",  # specs/experiments/69
    }
    arm = [
        *STAGED_REWARD,
        "--program-levers-from-update",
        "0",
        "--algorithm",
        "expert-iteration",
        "--search-acting",
        "network",
        "--search-share",
        "0.125",
        "--search-select",
        "first",
        "--search-ppo-coef",
        "1",
        "--search-simulations",
        "16",
        "--search-policy-target",
        "advantage",
        "--search-tree-reward",
        "env",
        "--value-trunk",
        "separate",
    ]
    preset = resolve_command_line(["--preset", "search-advantage"]).config
    assert preset == resolve_command_line(arm).config


def test_a_preset_value_has_the_type_the_flag_gives():
    values = load_preset("default").values
    assert type(values["program_bonus"]) is float  # written 4.0; `4` converts too
    assert values["reward_weights"] == {"siphon_death_penalty": 0.3}
    assert (
        resolve_command_line([]).config
        == resolve_command_line(
            ["--preset", "canonical", "--program-bonus", "4", "--network", "grid"]
            + ["--reward-weights", "siphon_death_penalty=0.3", "--siphon-pay-on-use"]
            + ["--free-program-spending", "--ent-coef-programs", "0.5"]
            + ["--program-levers-from-update", "120", "--ent-coef", "0.05", "--vf-coef", "0.1"]
        ).config
    )


def test_an_integer_converts_where_a_number_is_expected(tmp_path):
    path = preset_file(tmp_path, "version = 1\n[reward]\nprogram_bonus = 4\n")
    assert type(load_preset(path).values["program_bonus"]) is float


# ------------------------------------------------------------------ layers and sources


def test_each_layer_over_the_one_before_and_where_each_value_came_from(tmp_path):
    path = preset_file(
        tmp_path,
        'version = 1\nextends = "default"\n'
        "[rollout]\nseed = 5\n[ppo]\nvf_coef = 0.3\nnum_minibatches = 8\n"
        "[checkpoints]\nkeep_checkpoints = 2\n",
    )
    fresh = resolve_command_line(["--preset", path, "--seed", "9"])
    assert (fresh.config.seed, fresh.config.vf_coef, fresh.config.ent_coef) == (9, 0.3, 0.05)
    label = f"preset {path}"
    assert fresh.sources["seed"] == COMMAND_LINE
    assert fresh.sources["vf_coef"] == fresh.sources["ent_coef"] == label
    assert fresh.sources["gamma"] == DEFAULT
    # On a resume the checkpoint's stored values beat the preset's; the command line beats
    # both; a setting the checkpoint stores resolved (minibatches) is the preset's again.
    stored = cfg.TrainConfig(vf_coef=0.2, seed=7, num_minibatches=4, update_epochs=4).to_dict()
    resumed = resolve_command_line(["--preset", path, "--seed", "9"], stored)
    config = resumed.config
    assert (config.seed, config.vf_coef, config.ent_coef, config.network) == (9, 0.2, 0.15, "mlp")
    assert (config.num_minibatches, config.update_epochs) == (8, None)
    assert resumed.sources["vf_coef"] == resumed.sources["network"] == CHECKPOINT
    assert resumed.sources["num_minibatches"] == label
    assert resumed.run.keep_checkpoints == 2  # not stored: the preset's on a resume too
    assert "PPO: continuing the checkpoint's vf_coef=0.2, ent_coef=0.15" in resumed.lines


def test_an_option_an_old_checkpoint_lacks_is_its_default_not_the_presets():
    # A checkpoint from before --siphon-pay-on-use (and the rest) was trained without it.
    stored = {"num_envs": 256, "num_steps": 128, "ent_coef": 0.05, "program_bonus": 1.0}
    config = resolve_command_line([], stored).config
    assert (config.siphon_pay_on_use, config.ent_coef_programs, config.network) == (
        False,
        0.0,
        "mlp",
    )
    assert (config.program_bonus, config.program_levers_from_update) == (1.0, 0)


def test_a_curriculum_flag_drops_the_presets_curriculum_as_a_whole(tmp_path):
    path = preset_file(
        tmp_path, 'version = 1\n[curriculum]\ncurriculum = "late"\ncurriculum_p0 = 0.5\n'
    )
    assert resolve_command_line(["--preset", path]).config.curriculum_p0 == 0.5
    flagged = resolve_command_line(["--preset", path, "--curriculum-programs", "2"])
    config = flagged.config
    assert (config.curriculum, config.curriculum_p0, config.curriculum_programs) == (None, 1.0, "2")
    assert any(line.startswith("Curriculum: the command line's") for line in flagged.lines)


def test_a_reward_flag_keeps_the_rest_of_the_preset():
    resolved = resolve_command_line(["--program-bonus", "1"])
    assert resolved.config.program_bonus == 1.0
    assert resolved.config.siphon_pay_on_use is False  # the preset's reward is dropped whole
    assert resolved.config.network == "grid" and resolved.sources["network"] == "preset default"
    assert resolved.lines == [
        "Reward: the command line's (--program-bonus given); "
        "the preset default [reward] table is not used"
    ]


def test_the_start_up_table_names_each_source():
    resolved = resolve_command_line(["--seed", "3", "--keep-checkpoints", "2"])
    cfg.auto_scale_for_batch_size(resolved.config)
    table = "\n".join(config_table(resolved))
    assert "Configuration (preset default)" in table
    rows = {line.split()[1]: line for line in table.splitlines() if line.startswith("|   ")}
    assert rows["ent_coef"].rstrip(" |").endswith("0.05  preset default")
    assert rows["seed"].rstrip(" |").endswith("3  command line")
    assert rows["gamma"].rstrip(" |").endswith("0.99  default")
    assert "keep_checkpoints" in rows and "console" not in rows  # run options: when set
    assert "curriculum" not in rows  # none set
    assert rows["algorithm"].rstrip(" |").endswith("ppo  default")
    assert "search_simulations" not in rows  # expert iteration's only
    searching = resolve_command_line(["--preset", "expert-iteration"])
    cfg.auto_scale_for_batch_size(searching.config)
    assert "search_simulations" in "\n".join(config_table(searching))


# ------------------------------------------------------------------ bad presets


BAD_PRESETS = [
    ("", "no version"),
    ("version = 2\n", "version 2 is not one this trainer reads"),
    ('version = "1"\n', "is not one this trainer reads"),
    ("version = 1\nfoo = 1\n", "unknown key 'foo'"),
    ("version = 1\nppo = 3\n", "ppo must be a table"),
    ("version = 1\n[ppo]\nentcoef = 0.1\n", "[ppo] has no option 'entcoef'"),
    ("version = 1\n[reward]\nent_coef = 0.1\n", "ent_coef belongs in [ppo], not [reward]"),
    ('version = 1\n[rollout]\nnum_envs = "many"\n', "num_envs must be a whole number"),
    ("version = 1\n[rollout]\nnum_envs = 2.5\n", "num_envs must be a whole number"),
    ("version = 1\n[ppo]\nvf_coef = true\n", "vf_coef must be a number"),
    ('version = 1\n[network]\nnetwork = "cnn"\n', "network must be one of mlp, grid"),
    ('version = 1\n[network]\nvalue_target = "log"\n', "value_target must be one of raw"),
    ('version = 1\n[reward]\nreward_weights = "kills=2"\n', "reward_weights must be a table"),
    ('version = 1\n[reward]\nreward_weights = { kills = "x" }\n', "must be a number"),
    ("version = 1\n[checkpoints]\nkeep_checkpoints = -1\n", "must be 0 or more"),
    ('version = 1\n[resume]\nresume = "x"\n', "command-line-only options"),
    ('version = 1\n[logging]\nrun_name = "x"\n', "is set on the command line only"),
    ("version = 1\n[ppo\n", "not valid TOML"),
    ('version = 1\nextends = "nonexistent"\n', "no such preset"),
    ('version = 1\nextends = "mine.toml"\n', "extends itself"),
    ("version = 1\ndescription = 3\n", "description must be a string"),
]


@pytest.mark.parametrize("text, message", BAD_PRESETS)
def test_a_bad_preset_is_a_clear_error(tmp_path, text, message):
    path = preset_file(tmp_path, text)
    with pytest.raises(PresetError) as error:
        load_preset(path)
    assert message in str(error.value)
    assert str(tmp_path) in str(error.value) or "nonexistent" in str(error.value)


def test_a_bad_preset_trains_nothing(tmp_path, capsys):
    path = preset_file(tmp_path, "version = 1\n[ppo]\nent_coef = 'high'\n")
    checkpoints = tmp_path / "checkpoints"
    assert cli.main(["--preset", path, "--checkpoint-dir", str(checkpoints)]) == 2
    assert "error: preset" in capsys.readouterr().err and not checkpoints.exists()
    assert cli.main(["--preset", "nope", "--checkpoint-dir", str(checkpoints)]) == 2
    assert "shipped presets: canonical, default, expert-iteration, gpu" in capsys.readouterr().err


def test_a_semantic_error_of_a_preset_is_refused_before_anything_is_built(tmp_path, capsys):
    path = preset_file(tmp_path, "version = 1\n[reward]\nprogram_levers_from_update = 10\n")
    assert cli.main(["--preset", path, "--checkpoint-dir", str(tmp_path / "c")]) == 2
    assert "--program-levers-from-update has nothing to delay" in capsys.readouterr().err


# ------------------------------------------------------------------ the command line


def test_every_option_has_its_flags_in_the_generated_help():
    text = parser_with_presets().format_help()
    for item in cfg.OPTIONS:
        assert all(flag in text for flag in item.flags), item.name
        if item.spec.action == "switch":
            assert f"--no-{item.flag[2:]}" in text
    assert "(default: 0.15; preset default: 0.05)" in " ".join(text.split())
    assert "gpu" in text and "canonical" in text  # the presets are listed


def test_the_flags_behave_as_before():
    parse = cfg.build_parser().parse_args
    assert parse(["--reward-weights", "none"]).reward_weights is None
    assert parse(["--resume"]).resume == cfg.RESUME_LATEST
    assert parse(["--learning-rate", "1e-3"]).lr == parse(["--lr", "1e-3"]).lr == 1e-3
    assert parse(["--no-siphon-pay-on-use"]).siphon_pay_on_use is False
    assert parse(["--no-wandb"]).wandb is False and parse(["--wandb"]).wandb is True
    assert parse(["--no-episode-gif", "--no-artifact"]).episode_gif is False
    assert parse([]).value_target == "raw"  # refused by validate() when bad, naming the flag
    for bad in (["--num-envs", "x"], ["--network", "cnn"], ["--keep-checkpoints", "-1"]):
        with pytest.raises(SystemExit) as exit_:
            parse(bad)
        assert exit_.value.code == 2


def test_every_field_is_a_declared_option():
    names = [item.name for item in cfg.OPTIONS]
    assert len(names) == len(set(names))
    fields = [f.name for cls in (cfg.TrainConfig, cfg.RunOptions) for f in dataclasses.fields(cls)]
    assert sorted(names) == sorted(fields)
    assert all(item.stored == (item.name in cfg.CONFIG_FLAGS) for item in cfg.OPTIONS)


def test_the_flag_reference_is_generated_from_the_declarations():
    assert REFERENCE.read_text() == flag_reference_markdown(), (
        "docs/reference/trainer-flags.md is stale: run python/scripts/gen_flag_reference.py"
    )


# ------------------------------------------------------------------ --print-config


def test_print_config_on_a_resume_shows_the_checkpoints_values(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    stored = resolve_command_line(["--preset", "canonical", "--ent-coef", "0.3"]).config
    payload = {
        "format_version": 1,
        "step": 4,
        "params": {},
        "opt_state": {},
        "rng": [0, 0],
        "config": stored.to_dict(),
        "metrics": {},
        "last_logged_step": 4,
    }
    (run / "checkpoint_4.pkl").write_bytes(pickle.dumps(payload))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["--resume", str(run), "--vf-coef", "0.2", "--print-config"]) == 0
    printed = json.loads(out.getvalue())
    assert printed["preset"]["name"] == "default"
    assert printed["config"]["ent_coef"] == 0.3 and printed["sources"]["ent_coef"] == CHECKPOINT
    assert printed["config"]["network"] == "mlp"  # the checkpoint's, not the preset's grid
    assert printed["config"]["vf_coef"] == 0.2 and printed["sources"]["vf_coef"] == COMMAND_LINE
    assert not any(tmp_path.glob("run/*.jsonl"))  # nothing started
