"""What a training run achieved, read from its metrics.jsonl (training.md §3.6).

    hackmatrix-summary checkpoints/<run> [checkpoints/<run2> ...] [--last-evals 5]

The same summary the trainer prints at its end, for a finished, stopped or
still-running run: trends (first vs last chunks), peak KL and clip, the last
behaviour evaluation, the mean and range of the last few evaluations, and the
health warnings. Plays nothing; `python python/scripts/summarize_run.py` runs
the same `main`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hackmatrix.purejaxrl.console import LATE_EVALS, run_summary
from hackmatrix.purejaxrl.metrics import read_metrics_file


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="hackmatrix-summary",
        description="Summarize training runs from their metrics.jsonl (plays nothing).",
    )
    p.add_argument(
        "runs",
        nargs="+",
        type=Path,
        metavar="RUN",
        help="a run directory (checkpoints/<run name>) or its metrics.jsonl",
    )
    p.add_argument(
        "--last-evals",
        type=int,
        default=LATE_EVALS,
        metavar="N",
        help=f"average the headline numbers over the run's last N evaluations "
        f"(default {LATE_EVALS}; at least 2)",
    )
    args = p.parse_args(argv)
    if args.last_evals < 2:
        p.error(f"--last-evals must be at least 2 (got {args.last_evals})")
    return args


def metrics_path(run: Path) -> Path:
    """The metrics.jsonl of a run directory, or the file itself."""
    path = run / "metrics.jsonl" if run.is_dir() else run
    if not path.is_file():
        where = "no metrics.jsonl in this directory" if run.is_dir() else "no such run or file"
        raise FileNotFoundError(f"{run}: {where} (expected checkpoints/<run name>)")
    return path


def main(argv=None) -> int:
    args = parse_args(argv)
    status = 0
    for index, run in enumerate(args.runs):
        if index:
            print()
        try:
            records = read_metrics_file(metrics_path(run))
        except (FileNotFoundError, OSError, UnicodeDecodeError) as error:
            print(f"error: {error}", file=sys.stderr)
            status = 2
            continue
        print(f"== {run}")
        for line in run_summary(records, last_evals=args.last_evals):
            print(line)
    return status


if __name__ == "__main__":
    sys.exit(main())
