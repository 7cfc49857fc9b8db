"""Standard errors and the comparison of saved evaluation reports (training.md §9.6)."""

import json
import math

import numpy as np
import pytest

from hackmatrix.analysis import eval_stats
from hackmatrix.commands import evaluate


def record(returns, stages, *, siphon_deaths=0, programs=None, undo=None):
    """A per-game record as behaviour.per_game_record writes it (`undo`: how many of each
    game's program actions were UNDO)."""
    n = len(returns)
    ends = ["died_siphon_enemy"] * siphon_deaths + ["died_enemy"] * (n - siphon_deaths)
    programs = programs if programs is not None else [0] * n
    undo = undo if undo is not None else [0] * n
    return {
        "return": list(returns),
        "length": [50] * n,
        "final_stage": list(stages),
        "end": ends,
        "siphons": [1] * n,
        "kills": [2] * n,
        "programs": list(programs),
        "programs_without_undo": [p - u for p, u in zip(programs, undo)],
        "gained_program": [int(p > 0) for p in programs],
    }


def summary_of(rec):
    """The summary keys the comparison reads, computed from a per-game record."""
    n = len(rec["return"])
    summary = {
        key: float(np.mean(eval_stats.quantity(rec, name))) for key, _, name in eval_stats.HEADLINE
    }
    del summary["died_siphon_enemy_rate"]  # not a summary key: read from the ends
    stages = np.bincount(rec["final_stage"], minlength=9)[1:]
    summary.update(
        episodes=n,
        final_stage_histogram={str(s + 1): int(c) for s, c in enumerate(stages)},
        ends={name: rec["end"].count(name) for name in ("won", "died_enemy", "died_siphon_enemy")},
    )
    return summary


def write_report(path, rec, *, seeds=None, per_game=True, settings=None):
    n = len(rec["return"])
    result = {"label": path.stem, "mode": "greedy", "source": None, "summary": summary_of(rec)}
    if per_game:
        result["per_game"] = rec
    document = {
        "settings": settings or {"episodes": n, "first_game": 0, "max_steps": 1000},
        "game_seeds": seeds if seeds is not None else list(range(100, 100 + n)),
        "results": [result],
    }
    path.write_text(json.dumps(document))
    return path


def test_the_standard_error_is_the_sample_deviation_over_root_n():
    assert eval_stats.standard_error(np.array([0.0, 1.0, 0.0, 1.0])) == pytest.approx(
        math.sqrt(1 / 3) / 2
    )
    assert eval_stats.standard_error(np.array([3.0])) is None


def test_a_paired_difference_is_the_error_of_the_per_game_differences(tmp_path):
    rng = np.random.default_rng(0)
    difficulty = rng.normal(0, 3, 400)  # shared by both policies, game by game
    a = record(difficulty, [1] * 400)
    b = record(difficulty + 0.5 + rng.normal(0, 0.3, 400), [2] * 400)
    first = eval_stats.load_report(write_report(tmp_path / "a.json", a))[0]
    second = eval_stats.load_report(write_report(tmp_path / "b.json", b))[0]
    diff, error, paired = eval_stats.difference(first, second, "mean_return")
    per_game = np.asarray(b["return"]) - np.asarray(a["return"])
    assert paired and diff == pytest.approx(per_game.mean())
    assert error == pytest.approx(np.std(per_game, ddof=1) / math.sqrt(400))
    # Unpaired, the shared difficulty would swamp the 0.5 difference.
    unpaired = math.hypot(
        eval_stats.standard_error(np.asarray(a["return"])),
        eval_stats.standard_error(np.asarray(b["return"])),
    )
    assert error < unpaired / 5


def test_different_games_or_no_record_are_unpaired(tmp_path):
    a = record([1.0, 2.0, 3.0, 4.0], [1, 2, 2, 3], siphon_deaths=1)
    b = record([2.0, 2.0, 5.0, 4.0], [2, 2, 3, 3], siphon_deaths=2)
    first = eval_stats.load_report(write_report(tmp_path / "a.json", a))[0]
    other_games = eval_stats.load_report(write_report(tmp_path / "b.json", b, seeds=[7, 8, 9, 10]))
    _, error, paired = eval_stats.difference(first, other_games[0], "mean_return")
    expected = math.hypot(
        eval_stats.standard_error(np.asarray(a["return"])),
        eval_stats.standard_error(np.asarray(b["return"])),
    )
    assert not paired and error == pytest.approx(expected)
    old = eval_stats.load_report(write_report(tmp_path / "old.json", b, per_game=False))[0]
    # Without a record: the stage and the ends are pinned by the summary, a mean return is not.
    assert not old.paired and old.per_game["mean_return"] is None
    assert eval_stats.standard_error(old.per_game["mean_final_stage"]) == pytest.approx(
        eval_stats.standard_error(np.asarray(b["final_stage"], dtype=float))
    )
    assert old.per_game["died_siphon_enemy_rate"].mean() == pytest.approx(0.5)
    assert eval_stats.difference(first, old, "mean_return")[1] is None
    _, stage_error, stage_paired = eval_stats.difference(first, old, "mean_final_stage")
    assert not stage_paired and stage_error is not None


def test_the_comparison_table_lists_values_errors_and_marked_differences(tmp_path):
    a = record([1.0, 2.0, 3.0, 4.0], [1, 2, 2, 3], programs=[0, 1, 0, 2])
    b = record([2.0, 2.0, 5.0, 4.0], [2, 2, 3, 3], programs=[1, 1, 0, 2])
    paths = [
        write_report(tmp_path / "a.json", a),
        write_report(tmp_path / "b.json", b),
        write_report(tmp_path / "c.json", b, per_game=False, settings={"episodes": 4, "x": 1}),
    ]
    text = eval_stats.compare_reports(paths)
    assert "A  a (greedy)" in text and "C  c (greedy)" in text
    assert "B - A" in text and "C - A" in text
    stage_row = next(line for line in text.splitlines() if line.startswith("mean final stage"))
    assert "2.00 ± 0.41" in stage_row  # A's stages 1, 2, 2, 3
    diff_rows = [line for line in text.splitlines() if line.startswith("mean return")]
    assert "+0.75 ± 0.48" in diff_rows[1] and diff_rows[1].rstrip().endswith("+0.75")
    assert "note: the reports differ in x" in text
    assert "without a per-game record" in text


def test_games_running_only_undo_have_their_own_row(tmp_path):
    a = record([1.0, 2.0, 3.0, 4.0], [1, 2, 2, 3], programs=[0, 2, 0, 3], undo=[0, 2, 0, 1])
    b = record([1.0, 2.0, 3.0, 4.0], [1, 2, 2, 3], programs=[1, 2, 0, 3], undo=[0, 0, 0, 3])
    first, other = (
        eval_stats.load_report(write_report(tmp_path / f"{name}.json", rec))[0]
        for name, rec in (("a", a), ("b", b))
    )
    assert first.values["program_use_rate"] == 0.5
    assert first.values["program_use_rate_without_undo"] == 0.25
    diff, error, paired = eval_stats.difference(first, other, "program_use_rate_without_undo")
    per_game = np.array([1.0, 1.0, 0.0, -1.0])  # b's games 1-2 gain a non-UNDO run, game 4 loses it
    assert paired and diff == pytest.approx(0.25)
    assert error == pytest.approx(eval_stats.standard_error(per_game))
    # A report from before the row: it loads, and the row reads "-" with no difference.
    path = write_report(tmp_path / "older.json", a)
    document = json.loads(path.read_text())
    del document["results"][0]["per_game"]["programs_without_undo"]
    del document["results"][0]["summary"]["program_use_rate_without_undo"]
    path.write_text(json.dumps(document))
    old = eval_stats.load_report(path)[0]
    assert old.per_game["program_use_rate_without_undo"] is None
    assert math.isnan(old.values["program_use_rate_without_undo"])
    assert eval_stats.difference(old, other, "program_use_rate_without_undo")[1] is None
    values_row, difference_row = (
        line.split("UNDO")[1].split()
        for line in eval_stats.compare_reports([path, tmp_path / "b.json"]).splitlines()
        if line.startswith("episodes with a program other than UNDO")
    )
    assert values_row == ["-", "50.0", "%", "±", "28.9"]  # b: games 1 and 2
    assert difference_row == ["-"]
    # Only numbers added later may be missing: a record without its kills is malformed.
    del document["results"][0]["per_game"]["kills"]
    path.write_text(json.dumps(document))
    with pytest.raises(eval_stats.ReportError, match="missing or malformed 'kills'"):
        eval_stats.load_report(path)


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        ("{not json", "not a JSON evaluation report"),
        ('{"settings": {}, "game_seeds": []}', "missing or malformed 'results'"),
        ('{"settings": {}, "game_seeds": [], "results": []}', "holds no results"),
    ],
)
def test_bad_reports_are_clear_errors(tmp_path, capsys, content, message):
    path = tmp_path / "report.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(eval_stats.ReportError, match=message):
        eval_stats.compare_reports([path])
    assert evaluate.main(["--reports", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(path) in err and message in err


def test_reports_is_its_own_mode(tmp_path, capsys):
    with pytest.raises(SystemExit):
        evaluate.main(["random", "--reports", str(tmp_path / "a.json")])
    assert "--reports JSON" in capsys.readouterr().err


def test_a_pooled_report_gives_each_game_the_mean_of_its_plays(tmp_path):
    """`--last-checkpoints 2` writes both plays of each game one after the other; the report
    reads back one number per game (their mean), paired with a one-checkpoint report."""
    one = record([1.0, 2.0, 3.0, 4.0], [1, 2, 1, 2], programs=[0, 1, 0, 0])
    two = record([3.0, 2.0, 5.0, 4.0], [2, 2, 1, 3], programs=[1, 1, 0, 0])
    pooled = {key: one[key] + two[key] for key in one}
    summary = summary_of(pooled)
    summary["checkpoints"] = 2
    path = tmp_path / "pooled.json"
    write_report(path, pooled, seeds=list(range(100, 104)))
    document = json.loads(path.read_text())
    document["results"][0]["summary"] = summary
    path.write_text(json.dumps(document))
    (column,) = eval_stats.load_report(path)
    np.testing.assert_allclose(column.per_game["mean_return"], [2.0, 2.0, 4.0, 4.0])
    np.testing.assert_allclose(column.per_game["program_use_rate"], [0.5, 1.0, 0.0, 0.0])
    assert column.values["mean_return"] == pytest.approx(3.0) and column.paired
    assert eval_stats.column_error(column, "mean_return") == pytest.approx(
        np.std([2.0, 2.0, 4.0, 4.0], ddof=1) / 2
    )
    assert eval_stats.standard_errors(pooled, 2)["mean_return"] == pytest.approx(
        eval_stats.column_error(column, "mean_return")
    )
    single = eval_stats.load_report(write_report(tmp_path / "one.json", one))[0]
    diff, error, paired = eval_stats.difference(single, column, "mean_return")
    assert paired and diff == pytest.approx(0.5)
    assert error == pytest.approx(np.std([1.0, 0.0, 1.0, 0.0], ddof=1) / 2)
    # A record that does not split into the plays is a malformed report, named.
    document["results"][0]["summary"]["checkpoints"] = 3
    path.write_text(json.dumps(document))
    with pytest.raises(eval_stats.ReportError, match="pooled.json.*4 games x 3 checkpoint"):
        eval_stats.load_report(path)
