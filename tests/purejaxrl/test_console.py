"""The per-chunk console line, the --console full table and the end-of-run summary."""

import json
import math

import pytest

from hackmatrix.purejaxrl.console import (
    Progress,
    chunk_line,
    format_duration,
    format_value,
    grouped_table,
    run_summary,
    warning_line,
)
from hackmatrix.purejaxrl.health import HealthMonitor

METRICS = {
    "train/steps_per_second": 18594.8,
    "train/mean_episode_return": -3.1694,
    "train/mean_episode_length": 43.43,
    "stats/highest_stage": 5.0,
    "stats/mean_final_stage": 1.4213,
    "train/entropy": 0.83463,
    "train/approx_kl": 0.00131,
    "train/clip_frac": 0.0021,
    "actions/siphon_frac": 0.01358,
    "actions/program_frac": 0.00336,
    "train/timesteps": 2621440.0,
    "reward/step_penalty": -0.01,
    "reward/kills": 0.0104,
    "actions/siphon_valid_frac": 0.05,
    "key/mean_reward": -0.07,
    "train/pg_loss": -0.0012,
}


def test_chunk_line_holds_the_fields_that_matter_and_stays_short():
    line = chunk_line(120, 2441, 723.0, 3 * 3600 + 52 * 60, METRICS)
    assert line.startswith("[Update 120/2441 4.9%] 12m03s ETA 3h52m 18,595 steps/s")
    for field in (
        "return -3.17",
        "length 43.4",
        "stage max 5 mean 1.42",
        "entropy 0.835",
        "kl 0.0013",
        "clip 0.002",
        "siphon 0.0136",
        "program 0.0034",
    ):
        assert field in line, field
    assert len(line) < 200, len(line)
    assert "reward/" not in line and "pg_loss" not in line


def test_chunk_line_shows_dashes_for_missing_values_and_eval_when_present():
    line = chunk_line(
        10, 10, 5.0, None, {"train/mean_episode_return": math.nan, "eval/win_rate": 0.25}
    )
    assert "ETA --" in line and "return -" in line and "stage max -" in line
    assert line.endswith("eval win_rate 0.2500")


def test_progress_eta_leaves_out_the_compile_chunk():
    now = [100.0]
    progress = Progress(total_updates=100, start_update=0, clock=lambda: now[0])
    now[0] = 160.0  # chunk 1: 60 s, mostly compiling
    assert progress.tick(10) == (60.0, None)
    now[0] = 170.0  # then 10 updates per 10 s
    elapsed, eta = progress.tick(20)
    assert elapsed == 70.0 and eta == pytest.approx(80.0)


@pytest.mark.parametrize(
    "seconds, text",
    [(None, "--"), (7.2, "7s"), (723, "12m03s"), (13920, "3h52m"), (math.inf, "--")],
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


@pytest.mark.parametrize(
    "value, text",
    [
        (2621440.0, "2,621,440"),
        (0.00131, "0.0013"),
        (3.26e-06, "3.26e-06"),
        (None, "-"),
        (math.nan, "-"),
        (0.0, "0.0000"),
        (18594.8, "18,594.8"),
    ],
)
def test_format_value(value, text):
    assert format_value(value) == text


def test_grouped_table_lists_every_metric_under_its_prefix_in_order():
    table = grouped_table(METRICS)
    labels = [line.split()[0] for line in table.splitlines() if not line.startswith("   ")]
    assert labels == ["train/", "reward/", "actions/", "stats/", "key/"]
    for key in METRICS:
        assert key.split("/")[1] in table, key
    assert "2,621,440" in table


def chunk(update, ret, stage, **extra):
    return {
        "update": update,
        "train/timesteps": update * 100.0,
        "train/mean_episode_return": ret,
        "train/mean_episode_length": 40.0 + update,
        "stats/mean_final_stage": stage,
        "stats/highest_stage": round(stage + 1),
        **extra,
    }


def test_run_summary_gives_trends_last_eval_and_warnings():
    records = [chunk(u, ret=-3.0 + u / 10, stage=1.0 + u / 100) for u in range(10, 210, 10)]
    records.insert(5, {"update": 50, "eval/win_rate": 0.0})
    records.append({"update": 200, "eval/win_rate": 0.125, "eval/mean_stage": 2.5})
    records[8]["health/warnings"] = [{"check": "approx_kl_high", "update": 80}]
    lines = run_summary(records)
    text = "\n".join(lines)
    assert "20 chunks, updates 10-200, 20,000 env steps" in lines[0]
    assert "first 2 vs the last 2" in lines[0]
    assert "mean return       -1.50 -> 16.50" in text  # mean of 2 chunks at each end
    assert "mean final stage  1.15 -> 2.95" in text
    assert "best stage        4" in text
    assert "last eval (update 200): eval/mean_stage: 2.5000, eval/win_rate: 0.1250" in text
    assert "health warnings: approx_kl_high (update 80)" in text


def test_run_summary_without_eval_or_chunks():
    assert "no eval/* metrics" in "\n".join(run_summary([chunk(10, -1.0, 1.0)]))
    assert run_summary([]) == ["Run summary: no chunk finished"]


def test_run_summary_skips_values_that_are_not_finite_numbers():
    records = [chunk(u, ret=1.0, stage=2.0) for u in range(10, 50, 10)]
    records[0]["train/mean_episode_return"] = math.inf
    records[1]["train/mean_episode_return"] = "n/a"
    for update, stage in [(20, 2.0), (30, math.inf), (40, 4.0)]:
        records.append({"update": update, "eval/mean_final_stage": stage})
    text = "\n".join(run_summary(records, last_evals=3))
    assert "mean return       1.00 -> 1.00" in text
    assert "stage 3.00 (2.00..4.00) [2 of 3]" in text


def test_warning_line_is_flagged_and_names_the_metric():
    monitor = HealthMonitor()
    (warning,) = monitor.observe(30, {"train/approx_kl": 0.2})
    line = warning_line(warning)
    assert line.startswith("  HEALTH WARNING [approx_kl_high] train/approx_kl = 0.2000")


def test_run_summary_gives_peaks_and_the_mean_of_the_last_evals():
    records = [
        chunk(u, ret=0.0, stage=2.0, **{"train/approx_kl": u / 1e4, "train/clip_frac": 0.05})
        for u in range(10, 60, 10)
    ]
    records[1]["train/clip_frac"] = 0.2
    for update, stage, share in [(20, 1.0, 0.1), (40, 2.0, 0.2), (50, 3.0, 0.3), (50, 4.0, 0.4)]:
        records.append(
            {"update": update, "eval/mean_final_stage": stage, "eval/program_use_rate": share}
        )
    records[-1]["eval/program_use_rate_without_undo"] = 0.35
    text = "\n".join(run_summary(records, last_evals=3))
    assert "peak              KL 0.0050 (update 50), clip 0.2000 (update 20)" in text
    # update 50 was logged twice (a resume): its later record counts, once
    assert "last 3 evals   (updates 20, 40, 50)" in text
    assert "stage 2.33 (1.00..4.00); program games 23.3% (10.0%..40.0%)" in text
    assert "other than UNDO 35.0% (35.0%..35.0%) [1 of 3]" in text
    assert "last 1 evals" not in "\n".join(run_summary(records[:6]))  # one eval: no mean


def test_the_summary_command_reads_runs_and_names_bad_ones(tmp_path, capsys):
    from hackmatrix.commands import summary

    run = tmp_path / "run-a"
    run.mkdir()
    records = [chunk(u, ret=1.0, stage=2.0) for u in (10, 20)]
    records += [{"update": u, "eval/mean_final_stage": 2.0 + u / 100} for u in (10, 20)]
    (run / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    (tmp_path / "empty").mkdir()
    argv = [str(run), str(tmp_path / "empty"), str(run / "metrics.jsonl"), "--last-evals", "2"]
    assert summary.main(argv) == 2  # one bad run: an error for it, the others still summarized
    out, err = capsys.readouterr()
    assert out.count("Run summary: 2 chunks") == 2
    assert "last 2 evals   (updates 10, 20), mean (range): stage 2.15 (2.10..2.20)" in out
    assert "empty: no metrics.jsonl in this directory" in err
    with pytest.raises(SystemExit):
        summary.parse_args([str(run), "--last-evals", "1"])
    assert "at least 2" in capsys.readouterr().err


def test_the_summary_script_runs_from_a_checkout(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "metrics.jsonl").write_text(json.dumps(chunk(10, ret=1.0, stage=2.0)) + "\n")
    script = Path(__file__).resolve().parents[2] / "python/scripts/summarize_run.py"
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "Run summary: 1 chunks, updates 10-10" in done.stdout
