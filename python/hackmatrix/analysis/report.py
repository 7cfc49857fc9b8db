"""The behaviour evaluation's JSON document (`--json`; what `--reports` and `--seeds` read)."""

from __future__ import annotations

from .evaluation import Result
from .summary import per_game_record


def report(results: list[Result], settings: dict) -> dict:
    """The JSON document: settings, the game seeds, and each result's summary and per-game
    record (what `--reports` computes paired differences from; a pooled result's record
    holds its checkpoints' plays of those games one after another)."""
    first = results[0]
    games = len(first.games["game_seed"]) // first.summary.get("checkpoints", 1)
    return {
        "settings": settings,
        "game_seeds": [int(x) for x in first.games["game_seed"][:games]],
        "results": [
            {
                "label": r.label,
                "mode": r.mode,
                "source": r.source,
                "seconds": r.seconds,
                "summary": r.summary,
                **({"per_game": per_game_record(r.games)} if r.games else {}),
            }
            for r in results
        ],
    }
