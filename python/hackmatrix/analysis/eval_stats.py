"""How sure is an evaluation? Standard errors and comparisons of saved reports (training.md §9.6).

An evaluation plays a fixed set of games, so each headline number is a mean
over games and has a standard error: the sample standard deviation over the
games divided by the square root of their count. Two policies evaluated on
the same games are compared game by game (a paired difference), which is
tighter than two independent errors whenever the games' difficulty moves
both policies the same way.

Only numpy: this reads the per-game record that `behaviour.report` writes
into an evaluation's JSON (or, for a report written before that record
existed, what its summary still pins down).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# (summary key, row label, per-game quantity it is the mean of). The quantity names the
# per-game record's field; "x>0", "stage>=2" and "end=NAME" are the derived ones.
HEADLINE = (
    ("mean_return", "mean return", "return"),
    ("mean_length", "mean length", "length"),
    ("mean_final_stage", "mean final stage", "final_stage"),
    ("stage1_exit_rate", "stage-1 exit rate", "stage>=2"),
    ("win_rate", "win rate", "end=won"),
    ("died_siphon_enemy_rate", "died to a siphon-spawned enemy", "end=died_siphon_enemy"),
    ("siphons_per_episode", "siphons / episode", "siphons"),
    ("siphon_use_rate", "episodes with a siphon", "siphons>0"),
    ("kills_per_episode", "kills / episode", "kills"),
    ("programs_per_episode", "programs / episode", "programs"),
    ("program_use_rate", "episodes with a program", "programs>0"),
    (
        "program_use_rate_without_undo",
        "episodes with a program other than UNDO",
        "programs_without_undo>0",
    ),
    ("program_gain_rate", "episodes gaining a program", "gained_program"),
)
# Shares of games a summary pins down per game (a count of 1s among 0s).
RATES_OF_GAMES = (
    "siphon_use_rate",
    "program_use_rate",
    "program_use_rate_without_undo",
    "program_gain_rate",
)
# Shares of games are shown in percent, the rest as plain numbers.
RATES = {key for key, _, _ in HEADLINE if key.endswith("_rate")} | set(RATES_OF_GAMES)
# Headline numbers newer than some saved reports (summary key: per-game field): an older
# report lacks them and reads "-" there; any other missing number is a malformed report.
ADDED_LATER = {"program_use_rate_without_undo": "programs_without_undo"}


class ReportError(ValueError):
    """An evaluation report that cannot be read; the message names the file."""


def standard_error(values: np.ndarray) -> float | None:
    """The standard error of the mean of `values` (None for fewer than two)."""
    n = len(values)
    if n < 2:
        return None
    return float(np.std(values, ddof=1) / math.sqrt(n))


def quantity(record: dict, name: str) -> np.ndarray | None:
    """One per-game quantity of a per-game record, as floats; None where the record is
    older than the quantity (e.g. `programs_without_undo`)."""
    if name.startswith("end="):
        return (np.asarray(record["end"]) == name[4:]).astype(float)
    if name == "stage>=2":
        return (np.asarray(record["final_stage"]) >= 2).astype(float)
    field = name[:-2] if name.endswith(">0") else name
    if field not in record and field in ADDED_LATER.values():
        return None
    if name.endswith(">0"):
        return (np.asarray(record[field]) > 0).astype(float)
    return np.asarray(record[field], dtype=float)


def per_game_means(values: np.ndarray, checkpoints: int = 1) -> np.ndarray:
    """One number per game. A pooled record (`checkpoints` plays of the same games, one
    after another) gives each game the mean over its plays: the plays of one game are
    alike, so counting them as separate games would understate the error (training.md §9.8)."""
    if checkpoints == 1:
        return values
    if len(values) % checkpoints:
        raise ValueError(f"{len(values)} per-game values do not split into {checkpoints} plays")
    return values.reshape(checkpoints, -1).mean(axis=0)


def standard_errors(record: dict, checkpoints: int = 1) -> dict[str, float | None]:
    """The standard error of each headline number, from a per-game record."""
    values = {key: quantity(record, name) for key, _, name in HEADLINE}
    return {
        key: None if v is None else standard_error(per_game_means(v, checkpoints))
        for key, v in values.items()
    }


def _from_summary(summary: dict, key: str) -> np.ndarray | None:
    """A multiset of per-game values with the summary's mean, where the summary pins it
    down (stage from the histogram, ends from their counts, a share from its rate); None
    where it does not (a mean of counts). Its order is not the games' order."""
    n = int(summary["episodes"])
    if key in ("mean_final_stage", "stage1_exit_rate"):
        stages = np.repeat(
            [int(s) for s in summary["final_stage_histogram"]],
            list(summary["final_stage_histogram"].values()),
        ).astype(float)
        return stages if key == "mean_final_stage" else (stages >= 2).astype(float)
    if key in ("win_rate", "died_siphon_enemy_rate"):
        count = summary["ends"]["won" if key == "win_rate" else "died_siphon_enemy"]
        return np.repeat([1.0, 0.0], [count, n - count])
    if key in RATES_OF_GAMES and key in summary:
        count = round(summary[key] * n)
        return np.repeat([1.0, 0.0], [count, n - count])
    return None


def _per_game(record: dict, name: str, checkpoints: int, games: int) -> np.ndarray | None:
    """A quantity of a report's per-game record, one number per game in game order."""
    values = quantity(record, name)
    if values is None:
        return None
    if len(values) != checkpoints * games:
        raise ValueError(
            f"per_game[{name}] holds {len(values)} values for {games} games "
            f"x {checkpoints} checkpoint(s)"
        )
    return per_game_means(values, checkpoints)


@dataclass
class Column:
    """One (policy, mode) of one report: its headline values and per-game quantities."""

    name: str
    path: Path
    game_seeds: tuple[int, ...]
    settings: dict
    values: dict[str, float]
    per_game: dict[str, np.ndarray | None]
    paired: bool  # the per-game values are in game order (a real per-game record)
    mode: str = ""  # greedy, sample or random


def _value(summary: dict, key: str) -> float:
    """A headline number of a summary; NaN (shown as -) where the report is older than it."""
    if key == "died_siphon_enemy_rate":
        return summary["ends"]["died_siphon_enemy"] / summary["episodes"]
    if key in ADDED_LATER and key not in summary:
        return math.nan
    return float(summary[key])


def load_report(path: Path) -> list[Column]:
    """The columns of one `evaluate_agent.py --json` report."""
    try:
        document = json.loads(Path(path).read_text())
    except FileNotFoundError as error:
        raise ReportError(f"{path}: no such file") from error
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReportError(f"{path}: not a JSON evaluation report ({error})") from error
    return report_columns(document, Path(path))


def report_columns(document: dict, path: Path) -> list[Column]:
    """The columns of an evaluation report's document (`report.report`), read or just made;
    `path` names where it came from in the messages."""
    try:
        seeds = tuple(int(s) for s in document["game_seeds"])
        settings = dict(document["settings"])
        columns = []
        for result in document["results"]:
            summary = result["summary"]
            record = result.get("per_game")
            checkpoints = int(summary.get("checkpoints", 1))
            per_game = {
                key: _per_game(record, name, checkpoints, len(seeds))
                if record
                else _from_summary(summary, key)
                for key, _, name in HEADLINE
            }
            columns.append(
                Column(
                    name=result["label"]
                    if result["mode"] == "random"
                    else f"{result['label']} ({result['mode']})",
                    path=Path(path),
                    game_seeds=seeds,
                    settings=settings,
                    values={key: _value(summary, key) for key, _, _ in HEADLINE},
                    per_game=per_game,
                    paired=bool(record),
                    mode=result["mode"],
                )
            )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ReportError(
            f"{path}: not an evaluation report written by evaluate_agent.py --json "
            f"(missing or malformed {error})"
        ) from error
    if not columns:
        raise ReportError(f"{path}: the report holds no results")
    return columns


def difference(first: Column, other: Column, key: str) -> tuple[float, float | None, bool]:
    """`other − first` for one headline number, its standard error, and whether it is paired
    (both per-game records, over the same games in the same order)."""
    diff = other.values[key] - first.values[key]
    a, b = first.per_game[key], other.per_game[key]
    if a is None or b is None:
        return diff, None, False
    if first.paired and other.paired and first.game_seeds == other.game_seeds:
        return diff, standard_error(b - a), True
    error_a, error_b = standard_error(a), standard_error(b)
    if error_a is None or error_b is None:
        return diff, None, False
    return diff, math.hypot(error_a, error_b), False


def format_number(key: str, value: float, signed: bool = False) -> str:
    if math.isnan(value):
        return "-"
    sign = "+" if signed else ""
    if key in RATES:
        return f"{100 * value:{sign}.1f} %"
    return f"{value:{sign}.2f}"


def format_with_error(key: str, value: float, error: float | None, signed: bool = False) -> str:
    if error is None:
        return format_number(key, value, signed)
    spread = f"{100 * error:.1f}" if key in RATES else f"{error:.2f}"
    return f"{format_number(key, value, signed)} ± {spread}"


def column_letters(count: int) -> list[str]:
    """Short column headers: A, B, ... Z, then A2, B2, ..."""
    return [chr(ord("A") + i % 26) + (str(i // 26 + 1) if i >= 26 else "") for i in range(count)]


def format_grid(header: list[str], rows: list[tuple[str, list[str]]]) -> str:
    """A console table: row labels left-aligned, one right-aligned column per header."""
    first = max(len(label) for label, _ in rows)
    widths = [max(len(h), *(len(cells[i]) for _, cells in rows)) for i, h in enumerate(header)]

    def line(label: str, cells: list[str]) -> str:
        return "  ".join([label.ljust(first), *(c.rjust(w) for c, w in zip(cells, widths))])

    out = [line("", header), line("-" * first, ["-" * w for w in widths])]
    return "\n".join(out + [line(label, cells) for label, cells in rows])


def settings_notes(columns: list[Column]) -> list[str]:
    notes = []
    for name in sorted({k for c in columns for k in c.settings} - {"batch"}):
        seen = {json.dumps(c.settings.get(name)) for c in columns}
        if len(seen) > 1:
            notes.append(f"note: the reports differ in {name}: {', '.join(sorted(seen))}")
    if len({c.game_seeds for c in columns}) > 1:
        notes.append("note: the reports played different games: their differences are unpaired")
    return notes


def compare_reports(paths: list[Path]) -> str:
    """The headline numbers of every column of the reports, ± one standard error, then
    each column's difference from the first."""
    columns = [column for path in paths for column in load_report(path)]
    letters = column_letters(len(columns))
    episodes = sorted({int(c.settings.get("episodes", 0)) for c in columns})
    out = [f"{letter}  {c.name}  ({c.path})" for letter, c in zip(letters, columns)]
    out += [
        "",
        f"{'/'.join(f'{e:,}' for e in episodes)} games each; ± one standard error over games",
        format_grid(
            letters,
            [
                (
                    label,
                    [format_with_error(key, c.values[key], column_error(c, key)) for c in columns],
                )
                for key, label, _ in HEADLINE
            ],
        ),
    ]
    if len(columns) > 1:
        out += ["", f"difference from {letters[0]}:"]
        out += difference_table(
            columns[0], columns[1:], [f"{x} - {letters[0]}" for x in letters[1:]]
        )
    notes = settings_notes(columns)
    if any(not c.paired for c in columns):
        notes.append(
            "note: a report without a per-game record (written before it existed) has errors "
            "only for stage, ends and shares (a number without ± has none)"
        )
    return "\n".join(out + ([""] + notes if notes else []))


def difference_table(first: Column, others: list[Column], headers: list[str]) -> list[str]:
    """Each headline number of `others` less `first`, ± the standard error of the
    difference (paired game by game where both have per-game records of the same games),
    and the line that says how the errors were taken."""
    rows = []
    for key, label, _ in HEADLINE:
        cells = []
        for other in others:
            diff, error, paired = difference(first, other, key)
            marker = " *" if error is not None and not paired else ""
            cells.append(format_with_error(key, diff, error, signed=True) + marker)
        rows.append((label, cells))
    return [
        format_grid(headers, rows),
        "errors paired game by game over the same games; * unpaired (no per-game record, "
        "or different games): the two errors combined as if independent",
    ]


def column_error(column: Column, key: str) -> float | None:
    values = column.per_game[key]
    return None if values is None else standard_error(values)
