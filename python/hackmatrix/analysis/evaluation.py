"""One evaluation of a policy over the fixed games: play them, summarize, time it.

`evaluate_policy` plays one policy; `evaluate_pooled` plays several checkpoints of a run
on the same games and pools them into one result (training.md §9.8).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from .choosers import RANDOM
from .games import play_games
from .policies import EvaluationError, Policy, pooled_label
from .summary import summarize


@dataclass
class Result:
    """One column of the report: a policy played in one mode, its summary (`summary.py`),
    the seconds it took and its per-game arrays (`games.play_games`'s)."""

    label: str
    mode: str
    source: str | None
    summary: dict
    seconds: float
    games: dict = field(repr=False, default_factory=dict)

    @property
    def name(self) -> str:
        return self.label if self.mode == RANDOM else f"{self.label} ({self.mode})"


def search_label(label: str, settings: dict) -> str:
    """A policy's label, with `+ search N` when it plays through the search."""
    search = settings.get("search")
    if search is None:
        return label
    worlds = getattr(search, "worlds", 1)
    several = f" ({worlds} worlds)" if worlds > 1 else ""
    rollout = getattr(search, "leaf_rollout", 0)
    rolled = f" (leaf rollout {rollout})" if rollout else ""
    return f"{label} + search {search.num_simulations}{several}{rolled}"


def evaluate_policy(env: ModuleType, policy: Policy, mode: str, **settings: Any) -> Result:
    start = time.perf_counter()
    games = play_games(env, policy, mode, **settings)
    return Result(
        label=policy.label if policy.is_random else search_label(policy.label, settings),
        mode=RANDOM if policy.is_random else mode,
        source=policy.source,
        summary=summarize(games),
        seconds=time.perf_counter() - start,
        games=games,
    )


def pool_games(parts: list[dict]) -> dict:
    """Several checkpoints' plays of the same games as one record: each part's per-game
    arrays one after another (part-major), so game `g` of part `k` is row `k * n + g`."""
    first = parts[0]["game_index"]
    for part in parts[1:]:
        if not np.array_equal(part["game_index"], first):
            raise EvaluationError("pooled plays must be of the same games")
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def evaluate_pooled(env: ModuleType, policies: list[Policy], mode: str, **settings: Any) -> Result:
    """Each policy (a run's last few checkpoints) plays the same games; one result of them
    all. Its numbers describe the run around those updates rather than one checkpoint,
    whose evaluation moves by more than its standard error from save to save
    (specs/experiments/28-siphon-pay-on-use.md §28.5); its errors count each game once
    (training.md §9.8)."""
    if len(policies) == 1:
        return evaluate_policy(env, policies[0], mode, **settings)
    if any(policy.is_random for policy in policies):
        raise EvaluationError("only checkpoints are pooled, not the random policy")
    start = time.perf_counter()
    games = pool_games([play_games(env, policy, mode, **settings) for policy in policies])
    return Result(
        label=search_label(pooled_label(policies), settings),
        mode=mode,
        source=", ".join(str(policy.source) for policy in policies),
        summary=summarize(games, checkpoints=len(policies)),
        seconds=time.perf_counter() - start,
        games=games,
    )
