"""`python -m hackmatrix.analysis.plot` on two tiny real trainer runs, and what those
runs print. The runs play the stand-in game: plotting does not care which game made the
metrics, and its chunk compiles in seconds where the real engine's takes minutes.
"""

import contextlib
import io
import subprocess
import sys

import pytest
from conftest import subprocess_env
from test_runs import BATCH, TINY

from hackmatrix.analysis import plot
from hackmatrix.purejaxrl import cli
from hackmatrix.purejaxrl.metrics import read_metrics_file

pytest.importorskip("matplotlib")  # the viz extra; installed with hackmatrix[all]

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two 4-update runs (2 chunks each); the second prints the full table."""
    root = tmp_path_factory.mktemp("plot_runs")
    outputs = {}
    for name, extra in (("first", ()), ("second", ("--console", "full", "--seed", "1"))):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert (
                cli.main(
                    [
                        *TINY,
                        "--checkpoint-dir",
                        str(root),
                        "--run-name",
                        name,
                        "--env-module",
                        "standin_env",
                        "--no-episode-gif",
                        "--total-timesteps",
                        str(4 * BATCH),
                        *extra,
                    ]
                )
                == 0
            )
        outputs[name] = out.getvalue()
    return root, outputs


def assert_png(path):
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 20_000, (path, len(data))


def test_one_run_dashboard_lands_in_the_run_directory(two_runs, capsys):
    root, _ = two_runs
    assert plot.main([str(root / "first")]) == 0
    assert_png(root / "first" / "dashboard.png")
    assert "Wrote" in capsys.readouterr().out


def test_two_runs_overlaid(two_runs, tmp_path):
    root, _ = two_runs
    out = tmp_path / "nested" / "both.png"
    assert plot.main([str(root / "first"), str(root / "second"), "-o", str(out)]) == 0
    assert_png(out)
    runs = [plot.load_run(root / name) for name in ("first", "second")]
    assert [list(r.updates) for r in runs] == [[2, 4], [2, 4]]
    assert list(runs[0].steps) == [2 * BATCH, 4 * BATCH]


def test_a_directory_without_metrics_is_a_clear_error(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "hackmatrix.analysis.plot", str(tmp_path)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
    )
    assert result.returncode == 2
    assert f"{tmp_path}: no metrics.jsonl here" in result.stderr


def test_evaluation_records_merge_into_their_update(two_runs, tmp_path):
    root, _ = two_runs
    run_dir = tmp_path / "with_eval"
    run_dir.mkdir()
    lines = (root / "first" / "metrics.jsonl").read_text()
    (run_dir / "metrics.jsonl").write_text(lines + '{"update": 4, "eval/win_rate": 0.5}\n')
    run = plot.load_run(run_dir)
    assert list(run.updates) == [2, 4]
    assert run.series["eval/win_rate"][1] == 0.5 and run.series["train/entropy"][1] > 0
    assert_png(plot.draw_dashboard([run], tmp_path / "eval.png"))


def test_runs_log_the_new_metrics_and_print_short_lines_and_a_summary(two_runs):
    root, outputs = two_runs
    record = read_metrics_file(root / "first" / "metrics.jsonl")[-1]
    for key in (
        "actions/siphon_valid_frac",
        "actions/program_valid_frac",
        "stats/mean_final_stage",
        "health/active_warnings",
    ):
        assert key in record, key
    assert "final_stage_sum" not in record
    lines = outputs["first"].splitlines()
    chunk_lines = [line for line in lines if line.startswith("[Update")]
    assert [line.split("]")[0] for line in chunk_lines] == [
        "[Update 2/4 50.0%",
        "[Update 4/4 100.0%",
    ]
    assert all(len(line) < 200 for line in chunk_lines)
    assert any(line.startswith("Run summary: 2 chunks") for line in lines)
    assert "  reward/" not in outputs["first"]
    assert "  reward/" in outputs["second"] and "  actions/" in outputs["second"]
