"""One configuration trained on several seeds: how far apart are the seeds? (training.md §9.7)

A single run's evaluation has a standard error over games, but a training seed is
a bigger source of spread: two seeds of one configuration can differ by more than
their game-level errors (specs/experiments/28-siphon-pay-on-use.md). Given one saved
evaluation report per seed, this prints every headline number per seed (± its error
over games), then the mean over the seeds, the seed-to-seed standard deviation, the
standard error of that mean (sd / sqrt(seeds)) and the range; and, for targets such as
`mean_final_stage>=3`, how many seeds meet each one.

Only numpy; it reads what `eval_stats.load_report` reads.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .eval_stats import (
    HEADLINE,
    RATES,
    Column,
    ReportError,
    column_error,
    column_letters,
    format_grid,
    format_number,
    format_with_error,
    load_report,
    settings_notes,
)

COMPARISONS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}
LABELS = {key: label for key, label, _ in HEADLINE}
_TARGET = re.compile(r"^\s*([a-z0-9_]+)\s*(>=|<=|>|<)\s*([-+0-9.eE]+)\s*(%?)\s*$")


@dataclass(frozen=True)
class Target:
    """A bar one headline number should clear, e.g. program_use_rate >= 0.25."""

    key: str
    comparison: str
    value: float

    def met(self, value: float) -> bool:
        return not math.isnan(value) and COMPARISONS[self.comparison](value, self.value)

    def __str__(self) -> str:
        return f"{LABELS[self.key]} {self.comparison} {format_number(self.key, self.value)}"


def parse_target(text: str) -> Target:
    """`KEY>=VALUE` (or <=, >, <) over a headline key; a share may be written as 25%."""
    match = _TARGET.match(text)
    if not match:
        raise ValueError(
            f"target {text!r} is not KEY>=VALUE (or <=, >, <), e.g. mean_final_stage>=3"
        )
    key, comparison, number, percent = match.groups()
    if key not in LABELS:
        raise ValueError(f"target {text!r}: unknown number {key!r}; one of: {', '.join(LABELS)}")
    try:
        value = float(number)
    except ValueError as error:
        raise ValueError(f"target {text!r}: {number!r} is not a number") from error
    if percent:
        if key not in RATES:
            raise ValueError(f"target {text!r}: only a share of games can be given in %")
        value /= 100
    elif key in RATES and value > 1:
        raise ValueError(
            f"target {text!r}: {key} is a share between 0 and 1; write {value:g}% for percent"
        )
    return Target(key, comparison, value)


def _by_mode(path: Path) -> dict[str, Column]:
    """A report's columns by mode (greedy, sample, random); one policy per report."""
    columns: dict[str, Column] = {}
    for column in load_report(path):
        mode = column.mode
        if mode in columns:
            raise ReportError(
                f"{path}: holds more than one {mode} result; give one report per seed, "
                "each evaluating one policy"
            )
        columns[mode] = column
    return columns


def spread(values: list[float]) -> tuple[float, float | None, float | None, float, float]:
    """Mean, seed-to-seed standard deviation, standard error of the mean, min and max of
    the finite values (NaN marks a number an older report lacks)."""
    finite = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    if len(finite) == 0:
        return math.nan, None, None, math.nan, math.nan
    mean = float(finite.mean())
    if len(finite) < 2:
        return mean, None, None, float(finite.min()), float(finite.max())
    sd = float(finite.std(ddof=1))
    return mean, sd, sd / math.sqrt(len(finite)), float(finite.min()), float(finite.max())


def _plain(key: str, value: float | None) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}" if key in RATES else f"{value:.2f}"


def summarize_seeds(paths: list[Path], targets: Sequence[Target] = ()) -> str:
    """Every headline number per seed and across the seeds, per policy mode; then how many
    seeds meet each target."""
    if len(paths) < 2:
        raise ReportError("across-seed statistics need at least two reports, one per seed")
    reports = [_by_mode(Path(p)) for p in paths]
    modes = [m for m in ("greedy", "sample", "random") if all(m in r for r in reports)]
    if not modes:
        raise ReportError("the reports share no policy mode (greedy, sample or random)")
    letters = column_letters(len(paths))
    first_mode = [r[modes[0]] for r in reports]
    out = [f"{letter}  {c.name}  ({c.path})" for letter, c in zip(letters, first_mode)]
    header = [*letters, "mean", "sd", "± mean", "min..max"]
    for mode in modes:
        columns = [r[mode] for r in reports]
        rows = []
        for key, label, _ in HEADLINE:
            values = [c.values[key] for c in columns]
            mean, sd, error, low, high = spread(values)
            cells = [format_with_error(key, c.values[key], column_error(c, key)) for c in columns]
            cells += [
                format_number(key, mean),
                _plain(key, sd),
                _plain(key, error),
                f"{format_number(key, low)}..{format_number(key, high)}",
            ]
            rows.append((label, cells))
        out += [
            "",
            f"{mode}: {len(columns)} seeds; per seed ± one standard error over games; "
            "sd and ± mean are between seeds",
            format_grid(header, rows),
        ]
        for target in targets:
            values = [c.values[target.key] for c in columns]
            met = [x for x, v in zip(letters, values) if target.met(v)]
            per_seed = [f"{x} {format_number(target.key, v)}" for x, v in zip(letters, values)]
            mean, _, error, _, _ = spread(values)
            out.append(
                f"target {target}: met by {len(met)} of {len(columns)} seeds"
                f" ({', '.join(met) if met else 'none'}); per seed {', '.join(per_seed)};"
                f" mean {format_with_error(target.key, mean, error)}"
            )
    notes = settings_notes([r[modes[0]] for r in reports])
    skipped = sorted({m for r in reports for m in r} - set(modes))
    if skipped:
        notes.append(f"note: not in every report, so left out: {', '.join(skipped)}")
    if any(math.isnan(c.values[k]) for r in reports for c in r.values() for k, _, _ in HEADLINE):
        notes.append("note: a number an older report lacks (-) is left out of the mean")
    return "\n".join(out + ([""] + notes if notes else []))
