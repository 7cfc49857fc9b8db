"""The statistics of training.md §9.2 from the per-game arrays of the games played.

Plain numpy over `games.play_games`'s arrays (or several checkpoints' plays of the same
games, pooled): means, shares, histograms, the stage each game reached and completed,
the siphon yields, the program funnel, and one standard error of each headline mean
over the games (`eval_stats`, training.md §9.6).
"""

from __future__ import annotations

import numpy as np

from ..names import PROGRAM_NAMES
from . import eval_stats
from .facts import ENDS, NUM_STAGES, UNFINISHED, WON


def _share(part, whole) -> float | None:
    return float(part) / float(whole) if whole else None


UNDO = PROGRAM_NAMES.index("undo")


def program_uses_without_undo(games: dict) -> np.ndarray:
    """Program actions per game other than UNDO: most program actions of the trained agents
    are UNDO (specs/experiments/15-siphon-weight-anneal.md §15.2,
    28-siphon-pay-on-use.md §28.3), which says little about playing the programs."""
    return games["program_uses"].sum(1) - games["program_uses"][:, UNDO]


def per_game_record(games: dict) -> dict[str, list]:
    """The per-game numbers a report keeps (JSON-ready, in game order): what the headline
    means and their standard errors are computed from (`eval_stats`, training.md §9.6)."""
    uses = games["program_uses"].sum(1)
    return {
        "return": [round(float(x), 4) for x in games["return"]],
        "length": [int(x) for x in games["length"]],
        "final_stage": [int(x) for x in games["final_stage"]],
        "end": [ENDS[int(x)] for x in games["end"]],
        "siphons": [int(x) for x in games["siphons"]],
        "kills": [int(x) for x in games["kills"]],
        "programs": [int(x) for x in uses],
        "programs_without_undo": [int(x) for x in program_uses_without_undo(games)],
        "gained_program": [int(x > 0) for x in games["siphon_programs"]],
    }


def stage_completion(final_stages: np.ndarray, wins: int) -> dict[str, dict]:
    """Where the games are lost: for each stage, the games that reached it and the games
    that completed it (reached the next; stage 8 is completed by a win). Enemies and
    transmissions carry over and each stage adds more (game-rules.md §10), so the share
    completed falls stage by stage; its shape shows which stage stops a policy."""
    final_stages = np.asarray(final_stages)
    out = {}
    for stage in range(1, NUM_STAGES + 1):
        reached = int(np.sum(final_stages >= stage))
        completed = int(wins) if stage == NUM_STAGES else int(np.sum(final_stages > stage))
        out[str(stage)] = {
            "reached": reached,
            "completed": completed,
            "share": completed / reached if reached else None,
        }
    return out


# stage_entry's means: key -> (the per-game fact summed, the table's row).
STAGE_ENTRY_MEANS = {
    "mean_hp": ("hp_on_entering", "hp on entering, mean"),
    "mean_enemies": ("enemies_on_entering", "enemies on entering, mean"),
    "mean_transmissions": ("transmissions_on_entering", "transmissions on entering, mean"),
    "mean_steps": ("steps_on_stage", "steps on the stage, mean"),
}


def stage_entry(games: dict) -> dict[str, dict]:
    """For each stage: the games that entered it (or started on it), the mean hp, live
    enemies and transmissions they found, and the mean steps they played on it, the
    exiting step included (None where none did). A report older than the count has no
    such arrays and gets an empty dict."""
    if "stage_entries" not in games:
        return {}
    entries = games["stage_entries"].sum(0)
    return {
        str(stage + 1): {
            "entries": int(entries[stage]),
            **{
                key: _share(games[fact][:, stage].sum(), entries[stage])
                for key, (fact, _) in STAGE_ENTRY_MEANS.items()
            },
        }
        for stage in range(NUM_STAGES)
    }


def summarize(games: dict, checkpoints: int = 1) -> dict:
    """The statistics of training.md §9.2 from `play_games`'s per-game arrays (JSON-ready).

    `checkpoints` > 1: the arrays are that many checkpoints' plays of the same games, one
    after another (`pool_games`); every mean is then the mean over the checkpoints, counts
    are totals, and the standard errors count each game once (training.md §9.8)."""
    n = len(games["return"])
    return {
        "episodes": n,
        "checkpoints": checkpoints,
        **_outcomes(games, n),
        **_siphons(games, n),
        "data_siphon_pickups_per_episode": float(games["pickups"].sum() / n),
        "kills_per_episode": float(games["kills"].sum() / n),
        **_programs(games, n),
        "stage_entry": stage_entry(games),
        "invalid_actions": int(games["invalid_actions"].sum()),
        # One standard error of each headline mean, over the games (training.md §9.6).
        "standard_errors": eval_stats.standard_errors(per_game_record(games), checkpoints),
    }


def _outcomes(games: dict, n: int) -> dict:
    """Return, length, the stage reached and completed, and how the games ended."""
    ends = np.bincount(games["end"], minlength=len(ENDS))
    stages = np.bincount(games["final_stage"], minlength=NUM_STAGES + 1)[1:]
    return {
        "mean_return": float(np.mean(games["return"])),
        "median_return": float(np.median(games["return"])),
        "mean_length": float(np.mean(games["length"])),
        "final_stage_histogram": {str(s + 1): int(c) for s, c in enumerate(stages)},
        "stage_completion": stage_completion(games["final_stage"], ends[WON]),
        "mean_final_stage": float(np.mean(games["final_stage"])),
        "stage1_exit_rate": float(np.mean(games["final_stage"] >= 2)),
        "win_rate": float(ends[WON] / n),
        "unfinished": int(ends[UNFINISHED]),
        "ends": {name: int(c) for name, c in zip(ENDS, ends)},
    }


def _siphons(games: dict, n: int) -> dict:
    """How often the games siphon, how well, and what one siphon drains."""
    siphons = int(games["siphons"].sum())
    return {
        "siphons_per_episode": siphons / n,
        "siphon_use_rate": float(np.mean(games["siphons"] > 0)),
        "siphon_suboptimal_share": _share(games["siphons_suboptimal"].sum(), siphons),
        "siphon_missed_resources_per_siphon": _share(
            games["siphon_missed_resources"].sum(), siphons
        ),
        "siphon_empty_share": _share(games["siphons_empty"].sum(), siphons),
        "siphon_points_per_episode": float(games["siphon_points"].sum() / n),
        "siphon_programs_per_episode": float(games["siphon_programs"].sum() / n),
        # What one siphon drains, against what the board offered
        # (specs/experiments/21-siphon-yield.md).
        "siphon_yield": {
            name: _share(games[f"siphon_{name}"].sum(), siphons)
            for name in (
                "data_blocks",
                "program_blocks",
                "transmissions",
                "resources",
                "blocks_on_board",
            )
        },
        # A program taken on the step the player dies can never be run
        # (specs/experiments/17-unused-programs.md §17.2).
        "siphon_programs_at_death_per_episode": float(games["siphon_programs_at_death"].sum() / n),
    }


def _programs(games: dict, n: int) -> dict:
    """Program use: how often, which, gained against used, the funnel, RESET by hp."""
    uses = games["program_uses"]
    used_a_program = uses.sum(1) > 0
    gained_a_program = games["siphon_programs"] > 0
    resets = games["resets_by_hp"].sum(0)
    return {
        "programs_per_episode": float(uses.sum() / n),
        "program_use_rate": float(np.mean(used_a_program)),
        "program_use_rate_without_undo": float(np.mean(program_uses_without_undo(games) > 0)),
        # Acquisition or use: which one limits program play
        # (specs/experiments/16-acquisition-or-use.md §16.1)?
        "program_gain_rate": float(np.mean(gained_a_program)),
        "program_use_rate_after_gain": _share(
            np.sum(used_a_program & gained_a_program), np.sum(gained_a_program)
        ),
        "program_uses_per_episode": {
            name: float(uses[:, p].sum() / n) for p, name in enumerate(PROGRAM_NAMES)
        },
        # Why a held program is not run (specs/experiments/17-unused-programs.md): the
        # share of steps holding one,
        # of those the share where one can run, of those the share where one is run.
        "program_holding_step_share": _share(
            games["steps_holding_a_program"].sum(), games["length"].sum()
        ),
        "program_runnable_share_when_holding": _share(
            games["steps_a_program_runs"].sum(), games["steps_holding_a_program"].sum()
        ),
        "program_run_share_when_runnable": _share(uses.sum(), games["steps_a_program_runs"].sum()),
        "program_funnel": {
            name: {
                "held_steps": int(games["program_held_steps"][:, p].sum()),
                "affordable_steps": int(games["program_affordable_steps"][:, p].sum()),
                "runnable_steps": int(games["program_runnable_steps"][:, p].sum()),
                "runs": int(uses[:, p].sum()),
            }
            for p, name in enumerate(PROGRAM_NAMES)
        },
        "program_episode_share": {
            name: float(np.mean(uses[:, p] > 0)) for p, name in enumerate(PROGRAM_NAMES)
        },
        "reset_uses": {
            "at_1_hp": int(resets[1]),
            "at_2_hp": int(resets[2]),
            "at_other_hp": int(resets.sum() - resets[1] - resets[2]),
        },
    }
