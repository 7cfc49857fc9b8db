"""How honest a network's value is: V(s) beside the discounted return the game then paid.

The search values a leaf with the network's V (specs/search.md), so a value that is
biased on some stage misleads every tree that reaches it, more so the deeper the tree
(experiments §48: 64 simulations read worse than 16). This module is the arithmetic of
`search_probes.py value-calibration`: the returns of recorded games, and per stage the
mean value, the mean return, their bias, the root mean squared error and the share of the
return's variance the value explains. Plain numpy, so it is tested without playing.

Arrays are time-major: `[T, B]` for T recorded steps of B games. A game's steps count
while it is `live` (it had not ended before the step); a game still live after the last
recorded step was cut, and its returns are unknown, so its steps are left out.
"""

from __future__ import annotations

import numpy as np

STAGES = range(1, 9)
MEASURES = ("value", "return", "bias", "rmse", "explained")  # a row's numbers beside its steps


def finished_games(done: np.ndarray, live: np.ndarray) -> np.ndarray:
    """bool[B]: whether each game ended within the recorded [T, B] steps (only then is
    every return of it the return the game paid)."""
    return (np.asarray(done, bool) & np.asarray(live, bool)).any(axis=0)


def discounted_returns(
    rewards: np.ndarray, done: np.ndarray, live: np.ndarray, gamma: float
) -> tuple[np.ndarray, np.ndarray]:
    """(G f64[T, B], finished bool[B]): G_t = r_t + gamma * G_{t+1}, cut at each game's end.

    Steps where a game is not live hold 0; `finished[b]` is whether game b ended within
    the recorded steps (only then is every G_t of it the return the game paid).
    """
    rewards = np.asarray(rewards, np.float64)
    done = np.asarray(done, bool)
    live = np.asarray(live, bool)
    if not (rewards.shape == done.shape == live.shape) or rewards.ndim != 2:
        raise ValueError(
            f"rewards, done and live must share one [T, B] shape, got "
            f"{rewards.shape}, {done.shape}, {live.shape}"
        )
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma}")
    returns = np.zeros_like(rewards)
    following = np.zeros(rewards.shape[1])
    for t in range(rewards.shape[0] - 1, -1, -1):
        following = np.where(done[t], 0.0, following)  # nothing after a game's last step
        following = np.where(live[t], rewards[t] + gamma * following, 0.0)
        returns[t] = following
    return returns, finished_games(done, live)


def _row(values: np.ndarray, returns: np.ndarray) -> dict[str, float]:
    if values.size == 0:
        return {"steps": 0, **dict.fromkeys(MEASURES, float("nan"))}
    error = values - returns
    spread = returns.var()
    return {
        "steps": int(values.size),
        "value": float(values.mean()),
        "return": float(returns.mean()),
        "bias": float(error.mean()),
        "rmse": float(np.sqrt((error**2).mean())),
        # 1 - Var(G - V) / Var(G): 1 is a perfect value, 0 no better than a constant
        "explained": float(1.0 - error.var() / spread) if spread > 0 else float("nan"),
    }


def calibration_rows(
    values: np.ndarray, returns: np.ndarray, stages: np.ndarray, keep: np.ndarray
) -> list[dict]:
    """One row per stage 1..8 and one for all stages together (`stage` 0), over the kept
    steps: `keep` bool[T, B] (live steps of finished games)."""
    values, returns = np.asarray(values, np.float64), np.asarray(returns, np.float64)
    stages, keep = np.asarray(stages), np.asarray(keep, bool)
    rows = [{"stage": 0, **_row(values[keep], returns[keep])}]
    for stage in STAGES:
        here = keep & (stages == stage)
        rows.append({"stage": stage, **_row(values[here], returns[here])})
    return rows
