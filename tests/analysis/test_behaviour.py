"""Behaviour evaluation (training.md §9; hackmatrix.analysis: games, facts, summary, ...).

Batched play against a plain one-game loop, caps, loading, output.

Every test that plays uses the random policy on the same four games with a
batch of four, so one compiled `play` serves them all (the step cap is
a traced argument).
"""

import json
import types
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from hackmatrix.analysis.checkpoint_eval import training_metrics
from hackmatrix.analysis.choosers import RANDOM
from hackmatrix.analysis.evaluation import Result, evaluate_policy, evaluate_pooled, pool_games
from hackmatrix.analysis.facts import (
    BLOCK_CONTENT,
    DIED_ENEMY,
    DIED_OTHER,
    DIED_SIPHON_ENEMY,
    ENDS,
    MAX_HP,
    NUM_STAGES,
    RESET_ACTION,
    SIPHON_ACTION,
    UNFINISHED,
    WON,
    step_facts,
)
from hackmatrix.analysis.games import MAX_GAME_INDEX, check_settings, play_games, start_params
from hackmatrix.analysis.png import write_png
from hackmatrix.analysis.policies import (
    EvaluationError,
    Policy,
    chosen_checkpoint_policies,
    last_checkpoint_policies,
    load_policy_spec,
    pooled_label,
)
from hackmatrix.analysis.report import report
from hackmatrix.analysis.summary import (
    PROGRAM_NAMES,
    UNDO,
    program_uses_without_undo,
    stage_completion,
    stage_entry,
    summarize,
)
from hackmatrix.analysis.table import _completion_cell, _entry_cell, format_table
from hackmatrix.purejaxrl import distribution
from hackmatrix.purejaxrl.checkpoint import save_checkpoint
from hackmatrix.purejaxrl.network import OBS_SIZE, make_network

jax_env = pytest.importorskip("hackmatrix.jax_env")

REPO = Path(__file__).resolve().parents[2]
GAMES, FIRST, CAP, SEED = 4, 5, 400, 3
SETTINGS = dict(episodes=GAMES, first_game=FIRST, max_steps=CAP, batch=GAMES, seed=SEED)


# --------------------------------------------------------- the one-game reference


def _adjacent_enemy(board) -> bool:
    pos = int(board.player_pos)
    active, e_pos = np.asarray(board.e_active), np.asarray(board.e_pos)
    return any(
        a and abs(p // 6 - pos // 6) + abs(p % 6 - pos % 6) == 1 for a, p in zip(active, e_pos)
    )


def siphon_cross(pos: int) -> list[int]:
    """The player's cell and its in-grid neighbours (game-rules.md §6)."""
    row, col = divmod(pos, 6)
    near = [(row, col), (row - 1, col), (row + 1, col), (row, col - 1), (row, col + 1)]
    return [r * 6 + c for r, c in near if 0 <= r < 6 and 0 <= c < 6]


def reference_game(index: int, *, max_steps: int, seed: int, step, mask_of, reset) -> dict:
    """One game stepped by hand, one action at a time, counting in plain Python."""
    obs, state = reset(jax.random.PRNGKey(index))
    game_key = jax.random.fold_in(jax.random.PRNGKey(seed), index)
    total = np.float32(0.0)
    rec = dict(
        length=0,
        siphons=0,
        siphons_suboptimal=0,
        siphon_missed_resources=0,
        siphons_empty=0,
        siphon_points=0,
        siphon_programs=0,
        siphon_programs_at_death=0,
        siphon_data_blocks=0,
        siphon_program_blocks=0,
        siphon_transmissions=0,
        siphon_resources=0,
        siphon_blocks_on_board=0,
        pickups=0,
        kills=0,
        invalid_actions=0,
        program_uses=np.zeros(23, int),
        resets_by_hp=np.zeros(4, int),
        program_held_steps=np.zeros(23, int),
        program_affordable_steps=np.zeros(23, int),
        program_runnable_steps=np.zeros(23, int),
        steps_holding_a_program=0,
        steps_a_program_runs=0,
        end=UNFINISHED,
        game_seed=int(state.seed),
        stage_entries=np.zeros(8, int),
        hp_on_entering=np.zeros(8, int),
        enemies_on_entering=np.zeros(8, int),
        transmissions_on_entering=np.zeros(8, int),
        steps_on_stage=np.zeros(8, int),
    )

    def enter(s):  # the game starts on, or an exit takes it to, the stage of `s`
        rec["stage_entries"][int(s.stage) - 1] += 1
        rec["hp_on_entering"][int(s.stage) - 1] += int(s.board.hp)
        rec["enemies_on_entering"][int(s.stage) - 1] += int(np.sum(s.board.e_active))
        rec["transmissions_on_entering"][int(s.stage) - 1] += int(np.sum(s.board.t_active))

    enter(state)
    for t in range(max_steps):
        action_key, env_key = jax.random.split(jax.random.fold_in(game_key, t))
        mask = np.asarray(mask_of(state))
        action = int(distribution.sample(action_key, jnp.zeros(28), mask)[0])
        obs, new, reward, done, info = step(env_key, state, action)
        comps = {k: float(v) for k, v in info["reward_components"].items()}
        b, a = state.board, new.board
        total = np.float32(total + np.float32(reward))
        rec["length"] += 1
        rec["invalid_actions"] += bool(info["invalid_action"])
        rec["pickups"] += comps["data_siphon"] > 0
        rec["kills"] += round(comps["kills"] / 0.3)
        if action == 4:
            gained = int(np.sum(a.owned)) - int(np.sum(b.owned))
            rec["siphons"] += 1
            rec["siphons_suboptimal"] += comps["siphon_quality"] < 0
            rec["siphon_missed_resources"] += round(-comps["siphon_quality"] / 0.025)
            rec["siphon_points"] += int(a.score) - int(b.score)
            rec["siphon_programs"] += gained
            rec["siphon_programs_at_death"] += gained if bool(done) and bool(info["died"]) else 0
            for cell in siphon_cross(int(b.player_pos)):
                if int(b.content[cell]) == 1 and not bool(b.siphoned[cell]):
                    data = bool(b.hidden_is_data[cell])
                    rec["siphon_data_blocks"] += data
                    rec["siphon_program_blocks"] += not data
                    rec["siphon_transmissions"] += int(b.spawn_count[cell])
            rec["siphon_resources"] += int(a.credits) - int(b.credits)
            rec["siphon_resources"] += int(a.energy) - int(b.energy)
            rec["siphon_blocks_on_board"] += int(
                np.sum((np.asarray(b.content) == 1) & ~np.asarray(b.siphoned))
            )
            rec["siphons_empty"] += (int(a.score), int(a.credits), int(a.energy), gained) == (
                int(b.score),
                int(b.credits),
                int(b.energy),
                0,
            )
        if action >= 5:
            rec["program_uses"][action - 5] += 1
        held = np.asarray(b.owned, bool)
        costs = np.array([jax_env.constants.PROGRAM_COSTS[p] for p in range(23)])
        affordable = held & (int(b.credits) >= costs[:, 0]) & (int(b.energy) >= costs[:, 1])
        rec["program_held_steps"] += held
        rec["program_affordable_steps"] += affordable
        rec["program_runnable_steps"] += mask[5:]
        rec["steps_holding_a_program"] += bool(held.any())
        rec["steps_a_program_runs"] += bool(mask[5:].any())
        if action == 19:
            rec["resets_by_hp"][int(b.hp)] += 1
        rec["steps_on_stage"][int(state.stage) - 1] += 1
        if int(new.stage) > int(state.stage):
            enter(new)
        state = new
        if bool(done):
            if bool(info["won"]):
                rec["end"] = WON
            elif comps["siphon_death_penalty"] < 0:
                rec["end"] = DIED_SIPHON_ENEMY
            else:
                rec["end"] = DIED_ENEMY if _adjacent_enemy(a) else DIED_OTHER
            break
    rec["return"] = total
    rec["final_stage"] = int(state.stage)
    return rec


@pytest.fixture(scope="module")
def reference():
    fns = dict(
        step=jax.jit(jax_env.step),
        mask_of=jax.jit(jax_env.action_mask),
        reset=jax.jit(jax_env.reset),
    )
    return [reference_game(FIRST + k, max_steps=CAP, seed=SEED, **fns) for k in range(GAMES)]


@pytest.fixture(scope="module")
def random_result():
    return evaluate_policy(jax_env, Policy(label=RANDOM), "sample", **SETTINGS)


# ------------------------------------------------------------------- playing


def test_batched_games_match_a_one_game_loop(random_result, reference):
    games = random_result.games
    assert list(games["game_index"]) == list(range(FIRST, FIRST + GAMES))
    for k, ref in enumerate(reference):
        for name, value in ref.items():
            np.testing.assert_array_equal(
                games[name][k], value, err_msg=f"game {FIRST + k}: {name}"
            )
    assert len({r["length"] for r in reference}) > 1, "the games should differ"


def test_summary_counts_what_the_loop_saw(random_result, reference):
    s = random_result.summary
    returns = np.array([r["return"] for r in reference])
    assert s["episodes"] == GAMES
    assert s["mean_return"] == pytest.approx(float(returns.mean()))
    assert s["median_return"] == pytest.approx(float(np.median(returns)))
    assert s["mean_length"] == pytest.approx(np.mean([r["length"] for r in reference]))
    stages = [r["final_stage"] for r in reference]
    assert s["final_stage_histogram"] == {str(k): stages.count(k) for k in range(1, 9)}
    assert s["stage1_exit_rate"] == pytest.approx(np.mean(np.array(stages) >= 2))
    completion = s["stage_completion"]
    assert completion["1"] == {
        "reached": GAMES,
        "completed": sum(x >= 2 for x in stages),
        "share": s["stage1_exit_rate"],
    }
    for k in range(2, 8):
        reached = sum(x >= k for x in stages)
        assert completion[str(k)]["reached"] == reached
        assert completion[str(k)]["completed"] == sum(x > k for x in stages)
        assert (completion[str(k)]["share"] is None) == (reached == 0)
    assert sum(s["ends"].values()) == GAMES
    assert (
        s["ends"]["won"]
        + s["ends"]["unfinished"]
        + sum(s["ends"][e] for e in ("died_enemy", "died_siphon_enemy", "died_other"))
        == GAMES
    )
    siphons = sum(r["siphons"] for r in reference)
    assert s["siphons_per_episode"] == pytest.approx(siphons / GAMES)
    uses = sum(r["program_uses"] for r in reference)
    assert s["programs_per_episode"] == pytest.approx(uses.sum() / GAMES)
    assert s["program_uses_per_episode"]["undo"] == pytest.approx(uses[9] / GAMES)
    assert s["program_use_rate"] == pytest.approx(
        np.mean([r["program_uses"].sum() > 0 for r in reference])
    )
    assert s["program_use_rate_without_undo"] == pytest.approx(
        np.mean([r["program_uses"].sum() - r["program_uses"][UNDO] > 0 for r in reference])
    )
    gained = [r for r in reference if r["siphon_programs"] > 0]
    assert s["program_gain_rate"] == pytest.approx(len(gained) / GAMES)
    if gained:
        assert s["program_use_rate_after_gain"] == pytest.approx(
            np.mean([r["program_uses"].sum() > 0 for r in gained])
        )
    else:
        assert s["program_use_rate_after_gain"] is None


def test_stage_entry_means_what_the_loop_saw_on_entering(random_result, reference):
    entry = random_result.summary["stage_entry"]
    entries = sum(r["stage_entries"] for r in reference)
    assert entries[0] == GAMES and entries[1] > 0, "every game starts on stage 1; some exit it"
    for k in range(8):
        got = entry[str(k + 1)]
        assert got["entries"] == entries[k]
        for key in ("hp", "enemies", "transmissions", "steps"):
            name = "steps_on_stage" if key == "steps" else f"{key}_on_entering"
            total = sum(r[name][k] for r in reference)
            expected = None if entries[k] == 0 else pytest.approx(total / entries[k])
            assert got[f"mean_{key}"] == expected, (k, key)
    assert entry["1"]["mean_hp"] == MAX_HP  # the canonical start
    assert entry["1"]["mean_transmissions"] > 0  # stage 1 is generated with one
    steps = sum(got["mean_steps"] * got["entries"] for got in entry.values() if got["entries"])
    assert steps == pytest.approx(sum(r["length"] for r in reference))


def test_stage_entry_cells_read_each_stage_or_a_dash():
    summary = {
        "final_stage_histogram": {str(k): 0 for k in range(1, 9)},
        "stage_entry": {
            str(k): {"entries": 0, "mean_hp": None, "mean_enemies": None} for k in range(1, 9)
        },
    }
    summary["stage_entry"]["1"] = {"entries": 4, "mean_hp": 3.0, "mean_enemies": 0.0}
    summary["stage_entry"]["2"] = {"entries": 2, "mean_hp": 2.5, "mean_enemies": 12.5}
    assert _entry_cell(summary, "mean_hp").split() == ["3.0", "2.5"] + ["-"] * 6
    assert _entry_cell(summary, "mean_enemies").split() == ["0.0", "12"] + ["-"] * 6
    assert _entry_cell({"final_stage_histogram": {"1": 2}}, "mean_hp") == "  -"  # older
    assert stage_entry({"return": np.zeros(2)}) == {}


def test_stage_completion_counts_reaching_and_completing_each_stage():
    completion = stage_completion(np.array([1, 1, 2, 3, 3, 8, 8]), wins=1)
    assert completion["1"] == {"reached": 7, "completed": 5, "share": 5 / 7}
    assert completion["3"] == {"reached": 4, "completed": 2, "share": 0.5}
    assert completion["4"]["reached"] == 2 and completion["7"]["completed"] == 2
    assert completion["8"] == {"reached": 2, "completed": 1, "share": 0.5}  # one of them won
    assert stage_completion(np.array([1, 2]), wins=0)["5"]["share"] is None
    cell = _completion_cell(
        {"final_stage_histogram": {str(k): 0 for k in range(1, 9)}, "stage_completion": completion}
    )
    assert cell.split() == ["71", "80", "50", "100", "100", "100", "100", "50"]
    assert _completion_cell({"final_stage_histogram": {"1": 2}}) == "  -"  # an older summary


def test_games_of_undo_alone_are_not_games_with_another_program():
    uses = np.zeros((3, len(PROGRAM_NAMES)), int)
    uses[0, UNDO] = 4  # only UNDO
    uses[1, [UNDO, PROGRAM_NAMES.index("push")]] = 1
    np.testing.assert_array_equal(program_uses_without_undo({"program_uses": uses}), [0, 1, 0])


def test_program_funnel_counts_held_affordable_runnable_and_run(random_result, reference):
    s = random_result.summary
    held = sum(r["steps_holding_a_program"] for r in reference)
    runnable = sum(r["steps_a_program_runs"] for r in reference)
    runs = sum(int(r["program_uses"].sum()) for r in reference)
    assert held > 0 and runnable > 0, "one of the four games should hold and run a program"
    assert s["program_holding_step_share"] == pytest.approx(
        held / sum(r["length"] for r in reference)
    )
    assert s["program_runnable_share_when_holding"] == pytest.approx(runnable / held)
    assert s["program_run_share_when_runnable"] == pytest.approx(runs / runnable)
    for p, name in enumerate(PROGRAM_NAMES):
        funnel = s["program_funnel"][name]
        assert funnel["held_steps"] == sum(r["program_held_steps"][p] for r in reference)
        assert funnel["runs"] == sum(r["program_uses"][p] for r in reference)
        # Each stage of the funnel is a subset of the one before it.
        assert (
            funnel["held_steps"]
            >= funnel["affordable_steps"]
            >= funnel["runnable_steps"]
            >= funnel["runs"]
        )


def test_evaluation_is_deterministic_and_the_seed_matters(random_result):
    again = play_games(jax_env, Policy(label=RANDOM), "sample", **SETTINGS)
    for name, value in random_result.games.items():
        np.testing.assert_array_equal(again[name], value, err_msg=name)
    other = play_games(jax_env, Policy(label=RANDOM), "sample", **{**SETTINGS, "seed": SEED + 1})
    np.testing.assert_array_equal(
        other["game_seed"], random_result.games["game_seed"]
    )  # same games
    assert not np.array_equal(other["length"], random_result.games["length"])  # other actions


def test_games_still_running_at_the_cap_are_unfinished(random_result):
    lengths = random_result.games["length"]
    cap = int(np.sort(lengths)[1])  # some games end within the cap, the longer ones do not
    capped = play_games(jax_env, Policy(label=RANDOM), "sample", **{**SETTINGS, "max_steps": cap})
    over = lengths > cap
    assert over.any() and not over.all()
    np.testing.assert_array_equal(capped["length"], np.minimum(lengths, cap))
    np.testing.assert_array_equal(capped["end"][over], UNFINISHED)
    np.testing.assert_array_equal(capped["end"][~over], random_result.games["end"][~over])
    summary = summarize(capped)
    assert summary["unfinished"] == summary["ends"]["unfinished"] == int(over.sum())
    assert summary["episodes"] == GAMES  # nothing dropped


def test_siphon_yield_counts_the_blocks_of_the_cross_and_the_board():
    # game-rules.md §6: the cross drains a 5-point data block and a CRASH block (6
    # transmissions) and the resource under the player; an already siphoned block in the
    # cross and a block outside it give nothing, and the latter still counts on the board.
    state = jax_env.state_from_json(
        {
            "player": {"row": 2, "col": 2, "dataSiphons": 1},
            "blocks": [
                {"row": 1, "col": 2, "type": "data", "points": 5, "spawnCount": 5},
                {"row": 2, "col": 3, "type": "program", "programType": "crash", "spawnCount": 6},
                {
                    "row": 2,
                    "col": 1,
                    "type": "data",
                    "points": 3,
                    "spawnCount": 0,
                    "siphoned": True,
                },
                {"row": 5, "col": 4, "type": "data", "points": 2, "spawnCount": 2},
            ],
            "resources": [{"row": 2, "col": 2, "credits": 2}],
        }
    )
    mask = jax_env.action_mask(state)
    _, after, reward, done, info = jax_env.step(None, state, 4)
    facts = step_facts(state, mask, jnp.int32(4), after, reward, done, info)
    assert {k: int(facts[f"siphon_{k}"]) for k in ("data_blocks", "program_blocks")} == {
        "data_blocks": 1,
        "program_blocks": 1,
    }
    assert int(facts["siphon_transmissions"]) == 11
    assert int(facts["siphon_resources"]) == 2
    assert int(facts["siphon_blocks_on_board"]) == 3
    assert int(facts["siphon_points"]) == 5 and int(facts["siphon_programs"]) == 1
    moved = step_facts(after, mask, jnp.int32(0), after, reward, done, info)
    assert int(moved["siphon_blocks_on_board"]) == 0  # counted on siphon steps only


def test_summary_divides_the_siphon_yield_by_the_siphons(random_result, reference):
    yield_ = random_result.summary["siphon_yield"]
    siphons = sum(r["siphons"] for r in reference)
    assert siphons > 0
    for name in ("data_blocks", "program_blocks", "transmissions", "resources"):
        assert yield_[name] == pytest.approx(sum(r[f"siphon_{name}"] for r in reference) / siphons)
    drained = sum(r["siphon_data_blocks"] + r["siphon_program_blocks"] for r in reference)
    assert drained > 0, "a random siphon in four games should drain some block"
    assert yield_["blocks_on_board"] >= yield_["data_blocks"] + yield_["program_blocks"]


# ------------------------------------------------------------------- loading


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A run directory with two saves of a 16-wide network, written by save_checkpoint."""
    root = tmp_path_factory.mktemp("checkpoints")
    network = make_network(16, 1)
    (root / "tiny").mkdir()
    saved = {}
    for step in (1, 2):
        params = network.init(jax.random.PRNGKey(step), np.zeros((1, OBS_SIZE), np.float32))
        train_state = types.SimpleNamespace(params=params, opt_state={}, step=0)
        runner = types.SimpleNamespace(train_state=train_state, rng=np.zeros(2, np.uint32))
        save_checkpoint(
            root / "tiny",
            step,
            runner,
            {"hidden_dim": 16, "num_layers": 1, "bf16": False},
            metrics={},
            metrics_history=[],
            last_logged_step=step,
            include_env_state=False,
        )
        saved[step] = params
    return root, saved


def _same_params(policy, params):
    jax.tree_util.tree_map(np.testing.assert_array_equal, policy.params, jax.device_get(params))


@pytest.mark.parametrize("which", ["npz", "pkl", "run_dir", "latest"])
def test_policies_load_from_each_kind_of_path(tiny_run, which):
    root, saved = tiny_run
    text = {
        "npz": root / "tiny/params_1.npz",
        "pkl": root / "tiny/checkpoint_1.pkl",
        "run_dir": root / "tiny",
        "latest": "latest",
    }[which]
    policy = load_policy_spec(str(text), checkpoint_dir=root)
    _same_params(policy, saved[1 if which in ("npz", "pkl") else 2])
    assert policy.network.hidden_dim == 16 and policy.network.num_layers == 1
    assert policy.config["hidden_dim"] == 16 and not policy.is_random
    assert {leaf.dtype for leaf in jax.tree_util.tree_leaves(policy.params)} == {
        np.dtype(np.float32)
    }
    logits, _ = policy.network.apply(policy.params, np.zeros((2, OBS_SIZE), np.float32))
    assert logits.shape == (2, 28)


def test_a_lone_params_file_gets_its_sizes_from_the_layer_names(tiny_run, tmp_path):
    root, saved = tiny_run
    lone = tmp_path / "copied.npz"
    lone.write_bytes((root / "tiny/params_2.npz").read_bytes())
    policy = load_policy_spec(str(lone))
    assert policy.config == {} and policy.network.hidden_dim == 16
    _same_params(policy, saved[2])


@pytest.mark.parametrize(
    "text, message",
    [
        ("no/such/run", "no such file"),
        ("notes.txt", "expected a"),
        ("latest", "no run with checkpoints"),
    ],
)
def test_bad_policy_paths_are_clear_errors(tmp_path, monkeypatch, text, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(EvaluationError, match=message):
        load_policy_spec(text, checkpoint_dir=tmp_path / "checkpoints")


def test_last_checkpoints_are_a_runs_newest_saves_oldest_first(tiny_run, tmp_path):
    root, saved = tiny_run
    for text in (str(root / "tiny"), "latest"):
        policies = last_checkpoint_policies(text, 2, checkpoint_dir=root)
        assert [p.label for p in policies] == ["tiny/checkpoint_1", "tiny/checkpoint_2"]
        _same_params(policies[0], saved[1])
        _same_params(policies[1], saved[2])
    assert pooled_label(policies) == "tiny/checkpoint_1..checkpoint_2 (2 pooled)"
    (one,) = last_checkpoint_policies(str(root / "tiny"), 1)
    assert pooled_label([one]) == "tiny/checkpoint_2"
    _same_params(one, saved[2])
    assert last_checkpoint_policies(RANDOM, 3)[0].is_random
    with pytest.raises(EvaluationError, match="holds 2 checkpoint_.*fewer than .* 3"):
        last_checkpoint_policies(str(root / "tiny"), 3)
    with pytest.raises(EvaluationError, match="give its run directory"):
        last_checkpoint_policies(str(root / "tiny/checkpoint_2.pkl"), 2)
    with pytest.raises(EvaluationError, match="no run with checkpoints"):
        last_checkpoint_policies("latest", 2, checkpoint_dir=tmp_path)
    with pytest.raises(EvaluationError, match="no such run directory"):
        last_checkpoint_policies(str(tmp_path / "gone"), 2)
    with pytest.raises(EvaluationError, match="at least 1"):
        last_checkpoint_policies(str(root / "tiny"), 0)


def test_checkpoint_updates_pick_a_runs_saves_by_update(tiny_run, tmp_path):
    root, saved = tiny_run
    for text in (str(root / "tiny"), "latest"):
        policies = chosen_checkpoint_policies(text, [2, 1], checkpoint_dir=root)
        assert [p.label for p in policies] == ["tiny/checkpoint_1", "tiny/checkpoint_2"]
        _same_params(policies[0], saved[1])
        _same_params(policies[1], saved[2])
    (one,) = chosen_checkpoint_policies(str(root / "tiny"), [1])
    _same_params(one, saved[1])
    assert chosen_checkpoint_policies(RANDOM, [5])[0].is_random
    with pytest.raises(EvaluationError, match=r"no checkpoint_.*update\(s\) 3 \(saved: 1, 2\)"):
        chosen_checkpoint_policies(str(root / "tiny"), [1, 3])
    with pytest.raises(EvaluationError, match="twice"):
        chosen_checkpoint_policies(str(root / "tiny"), [1, 1])
    with pytest.raises(EvaluationError, match="updates >= 0"):
        chosen_checkpoint_policies(str(root / "tiny"), [-1])
    with pytest.raises(EvaluationError, match="give its run directory"):
        chosen_checkpoint_policies(str(root / "tiny/checkpoint_2.pkl"), [2])
    with pytest.raises(EvaluationError, match="no such run directory"):
        chosen_checkpoint_policies(str(tmp_path / "gone"), [2])


def test_pooled_plays_are_means_over_the_plays_with_errors_over_games(random_result):
    """Two plays of the same games pooled (here the random policy under two keys, standing
    in for two checkpoints): means over the plays, errors with each game counted once."""
    first = random_result.games
    second = play_games(jax_env, Policy(label=RANDOM), "sample", **{**SETTINGS, "seed": 9})
    games = pool_games([first, second])
    summary = summarize(games, checkpoints=2)
    assert summary["episodes"] == 2 * GAMES and summary["checkpoints"] == 2
    assert summary["mean_return"] == pytest.approx(
        (first["return"].mean() + second["return"].mean()) / 2
    )
    assert sum(summary["final_stage_histogram"].values()) == 2 * GAMES
    per_game = (first["final_stage"] + second["final_stage"]) / 2
    assert summary["standard_errors"]["mean_final_stage"] == pytest.approx(
        np.std(per_game, ddof=1) / np.sqrt(GAMES)
    )
    # The report keeps one list of game seeds and both plays in its per-game record.
    result = Result("pooled", "sample", None, summary, 0.0, games)
    document = report([result, random_result], {"episodes": GAMES})
    assert document["game_seeds"] == [int(x) for x in first["game_seed"]]
    assert len(document["results"][0]["per_game"]["return"]) == 2 * GAMES
    other = {**first, "game_index": first["game_index"] + 1}
    with pytest.raises(EvaluationError, match="same games"):
        pool_games([first, other])
    with pytest.raises(EvaluationError, match="not the random policy"):
        evaluate_pooled(jax_env, [Policy(label=RANDOM)] * 2, "sample", **SETTINGS)
    assert "checkpoints pooled" in format_table([result, random_result])
    assert "checkpoints pooled" not in format_table([random_result])


def test_the_transmissions_probe_plays_the_games_from_pending_transmissions(random_result):
    """`start_transmissions` plays the same games, started with siphon transmissions pending."""
    probe = start_params(jax_env, 5)
    assert float(probe.curriculum_prob) == 1.0 and probe.curriculum_transmissions.tolist() == [5, 5]
    games = play_games(jax_env, Policy(label=RANDOM), "sample", **SETTINGS, start_transmissions=5)
    fns = dict(
        step=jax.jit(jax_env.step),
        mask_of=jax.jit(jax_env.action_mask),
        reset=jax.jit(lambda key: jax_env.reset(key, probe)),
    )
    for k in range(GAMES):
        ref = reference_game(FIRST + k, max_steps=CAP, seed=SEED, **fns)
        for name in ("length", "end", "kills", "return", "final_stage", "game_seed"):
            np.testing.assert_array_equal(games[name][k], ref[name], err_msg=f"{k}: {name}")
    # The same seeds, other games: the five enemies change how they go.
    np.testing.assert_array_equal(games["game_seed"], random_result.games["game_seed"])
    assert not np.array_equal(games["kills"], random_result.games["kills"])


def test_the_probe_is_canonical_at_zero_and_checks_its_count():
    canonical = start_params(jax_env, 0)
    assert all(
        np.array_equal(a, b)
        for a, b in zip(jax.tree.leaves(canonical), jax.tree.leaves(jax_env.EnvParams()))
    )
    for bad in (-1, 36, 2.5):
        with pytest.raises(EvaluationError, match="start transmissions must be an integer"):
            start_params(jax_env, bad)
    with pytest.raises(EvaluationError, match="no curriculum starts"):
        start_params(types.SimpleNamespace(__name__="plain", EnvParams=dict), 3)


def test_bad_settings_are_clear_errors():
    with pytest.raises(EvaluationError, match="unknown policy mode 'best'"):
        check_settings("best", episodes=1, first_game=0, max_steps=1, batch=1)
    with pytest.raises(EvaluationError, match="max_steps must be at least 1"):
        check_settings("greedy", episodes=1, first_game=0, max_steps=0, batch=1)
    with pytest.raises(EvaluationError, match="game indices"):
        check_settings("greedy", episodes=2, first_game=MAX_GAME_INDEX, max_steps=1, batch=1)


# -------------------------------------------------------------------- output


def _load_script():
    from script_loading import load_script

    return load_script("evaluate_agent")


def test_cli_writes_table_json_and_png(random_result, tmp_path, capsys):
    script = _load_script()
    out_json, out_png = tmp_path / "b.json", tmp_path / "b.png"
    argv = [
        "random",
        "--episodes",
        str(GAMES),
        "--first-seed",
        str(FIRST),
        "--max-steps",
        str(CAP),
        "--batch",
        str(GAMES),
        "--seed",
        str(SEED),
        "--json",
        str(out_json),
        "--png",
        str(out_png),
    ]
    assert script.main(argv) == 0
    table = capsys.readouterr().out
    assert "stage-1 exit rate" in table and "ended: died siphon enemy" in table
    document = json.loads(out_json.read_text())
    assert document["settings"]["episodes"] == GAMES and document["settings"]["first_game"] == FIRST
    assert document["game_seeds"] == [int(x) for x in random_result.games["game_seed"]]
    summary = document["results"][0]["summary"]
    assert document["results"][0]["mode"] == RANDOM
    assert summary["mean_return"] == pytest.approx(random_result.summary["mean_return"])
    assert out_png.stat().st_size > 10_000 and out_png.read_bytes()[:4] == b"\x89PNG"
    # The per-game record (training.md §9.6): game order, and the summary's means and errors.
    per_game = document["results"][0]["per_game"]
    assert per_game["final_stage"] == [int(x) for x in random_result.games["final_stage"]]
    assert per_game["end"] == [ENDS[int(x)] for x in random_result.games["end"]]
    returns = np.asarray(per_game["return"])
    assert returns.mean() == pytest.approx(summary["mean_return"], abs=1e-3)
    errors = summary["standard_errors"]
    assert errors["mean_return"] == pytest.approx(
        np.std(returns, ddof=1) / np.sqrt(GAMES), abs=1e-3
    )
    assert errors["program_gain_rate"] == pytest.approx(
        np.std(np.asarray(per_game["gained_program"]), ddof=1) / np.sqrt(GAMES)
    )
    assert f"{summary['mean_final_stage']:.2f} ± {errors['mean_final_stage']:.2f}" in table
    # --reports reads it back and plays nothing.
    assert script.main(["--reports", str(out_json), str(out_json)]) == 0
    compared = capsys.readouterr().out
    assert "B - A" in compared and " *" not in compared.split("B - A")[1].split("errors paired")[0]


def test_cli_rejects_bad_input(tmp_path, capsys):
    script = _load_script()
    assert script.main([str(tmp_path / "missing.npz")]) == 2
    assert "missing.npz" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        script.main(["random", "--policy", "best"])
    with pytest.raises(SystemExit):
        script.main([])  # no policy at all
    assert script.main(["random", "--start-transmissions", "40"]) == 2
    assert "start transmissions must be an integer in 0..35" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        script.main(["random", "--last-checkpoints", "0"])
    with pytest.raises(SystemExit):
        script.main(["--reports", "a.json", "b.json", "--last-checkpoints", "2"])
    lone = tmp_path / "params.npz"
    lone.write_bytes(b"")
    assert script.main([str(lone), "--last-checkpoints", "2"]) == 2
    assert "give its run directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        script.main(["random", "--last-checkpoints", "2", "--checkpoint-updates", "1"])
    with pytest.raises(SystemExit):
        script.main(["--seeds", "a.json", "--checkpoint-updates", "1"])
    assert script.main([str(tmp_path), "--checkpoint-updates", "7"]) == 2
    assert "no checkpoint_*.pkl for update(s) 7 (saved: none)" in capsys.readouterr().err


def test_comparison_png_has_one_bar_group_per_result(random_result, tmp_path):
    other = Result(
        label="again", mode="greedy", source=None, summary=random_result.summary, seconds=0.0
    )
    path = write_png([random_result, other], tmp_path / "compare.png")
    assert path.stat().st_size > 10_000
    assert "again (greedy)" in format_table([random_result, other])


def test_training_metrics_use_the_eval_namespace(random_result):
    metrics = training_metrics(random_result.summary, 1.5)
    assert all(key.startswith("eval/") for key in metrics)
    assert metrics["eval/num_episodes"] == GAMES
    assert metrics["eval/stage1_exit_rate"] == random_result.summary["stage1_exit_rate"]
    assert sum(metrics[f"eval/end_{e}_rate"] for e in ENDS) == pytest.approx(1.0)
    assert metrics["eval/seconds"] == 1.5
    summary = random_result.summary
    assert metrics["eval/siphon_programs_at_death_per_episode"] == pytest.approx(
        summary["siphon_programs_at_death_per_episode"]
    )
    assert metrics["eval/program_holding_step_share"] == pytest.approx(
        summary["program_holding_step_share"]
    )
    drained = summary["siphon_yield"]
    assert metrics["eval/siphon_blocks_per_siphon"] == pytest.approx(
        drained["data_blocks"] + drained["program_blocks"]
    )
    assert metrics["eval/siphon_transmissions_per_siphon"] == pytest.approx(
        drained["transmissions"]
    )
    no_siphon = {**summary, "siphon_yield": dict.fromkeys(drained)}  # every share is None
    quiet = training_metrics(no_siphon, 1.5)
    assert np.isnan(quiet["eval/siphon_blocks_per_siphon"])
    assert np.isnan(quiet["eval/siphon_transmissions_per_siphon"])


@pytest.mark.slow  # a tiny training run: about a minute with a warm compilation cache
def test_each_checkpoint_logs_its_evaluation(tmp_path, capsys):
    """A tiny run with the evaluation on: one eval/* record per save, after the chunk's record."""
    from test_runs import BATCH, read_metrics, train

    assert (
        train(
            tmp_path,
            "--total-timesteps",
            str(4 * BATCH),
            "--eval-episodes",
            "3",
            "--eval-policy",
            "sample",
        )
        == 0
    )
    records = read_metrics(tmp_path / "run")
    evals = [r for r in records if "eval/num_episodes" in r]
    assert [r["update"] for r in evals] == [2, 4]  # the scheduled save and the final one
    assert all(
        r["eval/num_episodes"] == 3 and not any(k.startswith("train/") for k in r) for r in evals
    )
    assert sum(evals[-1][f"eval/end_{e}_rate"] for e in ENDS) == pytest.approx(1.0)
    assert "Eval (sample, 3 games" in capsys.readouterr().out


def test_program_names_match_the_engine():
    """analysis/facts.py and summary.py take them from hackmatrix.names, which must agree
    with the engine."""
    from hackmatrix.jax_env import constants

    assert PROGRAM_NAMES == constants.PROGRAM_NAMES
    assert RESET_ACTION == 5 + constants.RESET and MAX_HP == constants.MAX_HP
    assert (NUM_STAGES, SIPHON_ACTION) == (constants.LAST_STAGE, 4)
    assert BLOCK_CONTENT == constants.BLOCK
