"""One configuration on several seeds: the across-seed summary (training.md §9.7)."""

import json
import math
import re

import numpy as np
import pytest
from test_eval_stats import record, write_report

from hackmatrix.analysis import seed_stats
from hackmatrix.analysis.eval_stats import ReportError
from hackmatrix.commands import evaluate


def seed_report(tmp_path, name, stage, programs_share, n=100):
    """A greedy report whose games all end on `stage` and where the first
    `programs_share` of them run one program."""
    used = round(programs_share * n)
    rec = record(np.zeros(n), [stage] * n, programs=[1] * used + [0] * (n - used))
    return write_report(tmp_path / f"{name}.json", rec)


def test_targets_parse_keys_comparisons_and_percent():
    target = seed_stats.parse_target("program_use_rate>=25%")
    assert (target.key, target.comparison, target.value) == ("program_use_rate", ">=", 0.25)
    assert seed_stats.parse_target(" mean_final_stage > 3 ").value == 3.0
    assert seed_stats.parse_target("program_use_rate<=0.5").met(0.5)
    assert not seed_stats.parse_target("mean_return<0").met(0.0)
    assert not seed_stats.parse_target("mean_return>=0").met(math.nan)


@pytest.mark.parametrize(
    "text, message",
    [
        ("mean_final_stage=3", "is not KEY>=VALUE"),
        ("stage>=3", "unknown number 'stage'"),
        ("mean_final_stage>=3%", "only a share of games"),
        ("program_use_rate>=25", "write 25% for percent"),
        ("mean_return>=1.2.3", "is not a number"),
    ],
)
def test_bad_targets_say_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        seed_stats.parse_target(text)


def test_the_spread_is_between_seeds_and_skips_missing_numbers():
    mean, sd, error, low, high = seed_stats.spread([3.0, 2.0, 4.0, math.nan])
    assert (mean, low, high) == (3.0, 2.0, 4.0)
    assert sd == pytest.approx(1.0) and error == pytest.approx(1 / math.sqrt(3))
    assert seed_stats.spread([2.5])[1:3] == (None, None)


def test_the_summary_counts_the_seeds_meeting_each_target(tmp_path):
    paths = [
        seed_report(tmp_path, "s1", 3, 0.30),
        seed_report(tmp_path, "s2", 2, 0.20),
        seed_report(tmp_path, "s3", 4, 0.26),
    ]
    targets = [
        seed_stats.parse_target("mean_final_stage>=3"),
        seed_stats.parse_target("program_use_rate>=25%"),
    ]
    text = seed_stats.summarize_seeds(paths, targets)
    stage_row = next(line for line in text.splitlines() if line.startswith("mean final stage"))
    # per seed (no spread over games: every game ends on the same stage), mean, sd, ± mean, range
    cells = re.split(r"\s{2,}", stage_row.strip())[1:]
    assert cells == [
        "3.00 ± 0.00",
        "2.00 ± 0.00",
        "4.00 ± 0.00",
        "3.00",
        "1.00",
        "0.58",
        "2.00..4.00",
    ]
    assert "target mean final stage >= 3.00: met by 2 of 3 seeds (A, C)" in text
    assert "target episodes with a program >= 25.0 %: met by 2 of 3 seeds (A, C)" in text
    assert "per seed A 30.0 %, B 20.0 %, C 26.0 %; mean 25.3 % ± 2.9" in text


def test_reports_from_older_versions_and_other_games_are_noted(tmp_path):
    old = seed_report(tmp_path, "old", 2, 0.2)
    document = json.loads(old.read_text())
    del document["results"][0]["summary"]["program_use_rate_without_undo"]
    del document["results"][0]["per_game"]["programs_without_undo"]
    document["game_seeds"] = list(range(500, 600))
    old.write_text(json.dumps(document))
    text = seed_stats.summarize_seeds([old, seed_report(tmp_path, "new", 3, 0.3)])
    assert "left out of the mean" in text
    assert "played different games" in text


def test_one_report_or_one_with_two_policies_is_refused(tmp_path):
    one = seed_report(tmp_path, "one", 2, 0.2)
    with pytest.raises(ReportError, match="at least two reports"):
        seed_stats.summarize_seeds([one])
    two = json.loads(one.read_text())
    two["results"].append(dict(two["results"][0], label="other"))
    (tmp_path / "two.json").write_text(json.dumps(two))
    with pytest.raises(ReportError, match="more than one greedy result"):
        seed_stats.summarize_seeds([one, tmp_path / "two.json"])


def test_seeds_and_target_on_the_command_line(tmp_path, capsys):
    paths = [str(seed_report(tmp_path, f"s{i}", 2 + i, 0.2)) for i in range(2)]
    assert evaluate.main(["--seeds", *paths, "--target", "mean_final_stage>=3"]) == 0
    assert "met by 1 of 2 seeds (B)" in capsys.readouterr().out
    assert evaluate.main(["--seeds", paths[0], str(tmp_path / "missing.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    for argv, message in [
        (["--reports", *paths, "--target", "win_rate>0"], "it needs --seeds"),
        (["--seeds", *paths, "--target", "wins>0"], "unknown number 'wins'"),
        (["--seeds", *paths, "--reports", *paths], "give exactly one of"),
    ]:
        with pytest.raises(SystemExit):
            evaluate.parse_args(argv)
        assert message in capsys.readouterr().err


def test_a_label_with_brackets_keeps_its_mode(tmp_path):
    paths = [seed_report(tmp_path, f"s{i}", 2, 0.2) for i in range(2)]
    document = json.loads(paths[0].read_text())
    document["results"][0]["label"] = "run (copy) (old)"
    paths[0].write_text(json.dumps(document))
    assert "greedy: 2 seeds" in seed_stats.summarize_seeds(paths)
