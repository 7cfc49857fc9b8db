"""The behaviour evaluation's console table: one column per result (training.md §9.3)."""

from __future__ import annotations

import math
from collections.abc import Callable

from ..names import PROGRAM_NAMES
from .eval_stats import format_grid
from .evaluation import Result
from .facts import ENDS
from .summary import STAGE_ENTRY_MEANS


def _fmt(value, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


def _fmt_error(summary: dict, key: str, digits: int = 2) -> str:
    """A headline number with its standard error over the games, where the summary has one."""
    error = summary.get("standard_errors", {}).get(key)
    text = _fmt(summary[key], digits)
    return text if error is None else f"{text} ± {error:.{digits}f}"


def _completion_cell(summary: dict) -> str:
    """Each stage's share completed of the games reaching it, in percent, stage 1 first
    (`-`: no game reached it; a report older than the count also reads `-`)."""
    return _stage_cells(summary, "stage_completion", "share", lambda share: f"{100 * share:3.0f}")


def _stage_cells(summary: dict, section: str, key: str, fmt: Callable[[float], str]) -> str:
    """One cell per stage of `summary[section][stage][key]`, formatted; `-` where it is None
    or missing (a report older than the section)."""
    by_stage = summary.get(section, {})
    values = [by_stage.get(stage, {}).get(key) for stage in summary["final_stage_histogram"]]
    return " ".join("  -" if value is None else fmt(value) for value in values)


def _entry_cell(summary: dict, key: str) -> str:
    """Each stage's mean of `key` on entering it, stage 1 first (`-`: none entered it, or a
    report older than the count)."""
    return _stage_cells(
        summary, "stage_entry", key, lambda mean: f"{mean:3.1f}" if mean < 9.95 else f"{mean:3.0f}"
    )


def table_rows(results: list[Result]) -> list[tuple[str, list[str]]]:
    """(row name, one cell per result) for the console table."""
    s = [r.summary for r in results]
    rows = [("episodes", [_fmt(x["episodes"]) for x in s])]
    if any(x.get("checkpoints", 1) > 1 for x in s):
        rows.append(("  checkpoints pooled", [_fmt(x.get("checkpoints", 1)) for x in s]))
    rows += [
        ("mean return", [_fmt_error(x, "mean_return") for x in s]),
        ("median return", [_fmt(x["median_return"]) for x in s]),
        ("mean length", [_fmt_error(x, "mean_length", 1) for x in s]),
        ("mean final stage", [_fmt_error(x, "mean_final_stage") for x in s]),
        ("stage-1 exit rate", [_fmt_error(x, "stage1_exit_rate", 3) for x in s]),
        ("win rate", [_fmt_error(x, "win_rate", 3) for x in s]),
    ]
    rows += [
        (f"  final stage {k}", [_fmt(x["final_stage_histogram"][k]) for x in s])
        for k in s[0]["final_stage_histogram"]
    ]
    rows.append(("  stage", [" ".join(f"{k:>3}" for k in x["final_stage_histogram"]) for x in s]))
    rows.append(("    completed, of games reaching it (%)", [_completion_cell(x) for x in s]))
    rows += [
        (f"    {label}", [_entry_cell(x, key) for x in s])
        for key, (_, label) in STAGE_ENTRY_MEANS.items()
    ]
    rows += [
        (f"  ended: {name.replace('_', ' ')}", [_fmt(x["ends"][name]) for x in s]) for name in ENDS
    ]
    rows += [
        ("siphons / episode", [_fmt_error(x, "siphons_per_episode") for x in s]),
        ("  episodes with a siphon", [_fmt_error(x, "siphon_use_rate", 3) for x in s]),
        ("  suboptimal siphon share", [_fmt(x["siphon_suboptimal_share"], 3) for x in s]),
        ("  missed resources / siphon", [_fmt(x["siphon_missed_resources_per_siphon"]) for x in s]),
        ("  empty siphon share", [_fmt(x["siphon_empty_share"], 3) for x in s]),
        ("  points / episode", [_fmt(x["siphon_points_per_episode"]) for x in s]),
        ("  programs gained / episode", [_fmt(x["siphon_programs_per_episode"]) for x in s]),
        (
            "    of those, as the player dies",
            [_fmt(x["siphon_programs_at_death_per_episode"]) for x in s],
        ),
        ("  per siphon: data blocks", [_fmt(x["siphon_yield"]["data_blocks"]) for x in s]),
        ("    program blocks", [_fmt(x["siphon_yield"]["program_blocks"]) for x in s]),
        ("    transmissions queued", [_fmt(x["siphon_yield"]["transmissions"]) for x in s]),
        ("    credits + energy", [_fmt(x["siphon_yield"]["resources"]) for x in s]),
        (
            "    unsiphoned blocks on the board",
            [_fmt(x["siphon_yield"]["blocks_on_board"]) for x in s],
        ),
        ("data-siphon pickups / episode", [_fmt(x["data_siphon_pickups_per_episode"]) for x in s]),
        ("kills / episode", [_fmt_error(x, "kills_per_episode") for x in s]),
        ("programs / episode", [_fmt_error(x, "programs_per_episode") for x in s]),
        ("  episodes with a program", [_fmt_error(x, "program_use_rate", 3) for x in s]),
        (
            "    other than UNDO",
            [_fmt_error(x, "program_use_rate_without_undo", 3) for x in s],
        ),
        ("  episodes gaining a program", [_fmt_error(x, "program_gain_rate", 3) for x in s]),
        ("  of those, using a program", [_fmt(x["program_use_rate_after_gain"], 3) for x in s]),
        ("  steps holding a program", [_fmt(x["program_holding_step_share"], 3) for x in s]),
        ("    one can run", [_fmt(x["program_runnable_share_when_holding"], 3) for x in s]),
        ("    one is run", [_fmt(x["program_run_share_when_runnable"], 3) for x in s]),
    ]
    used = [
        name for name in PROGRAM_NAMES if any(x["program_uses_per_episode"][name] > 0 for x in s)
    ]
    rows += [
        (f"  {name} / episode", [_fmt(x["program_uses_per_episode"][name], 3) for x in s])
        for name in used
    ]
    rows += [
        ("  RESET at 1 HP", [_fmt(x["reset_uses"]["at_1_hp"]) for x in s]),
        ("  RESET at 2 HP", [_fmt(x["reset_uses"]["at_2_hp"]) for x in s]),
        ("invalid actions", [_fmt(x["invalid_actions"]) for x in s]),
        ("seconds", [_fmt(r.seconds, 1) for r in results]),
    ]
    return rows


def format_table(results: list[Result]) -> str:
    return format_grid([r.name for r in results], table_rows(results))
