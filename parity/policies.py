"""Policies that choose actions while recording or fuzzing.

A policy is called with the engine's last outcome (mask included) and the
engine itself (so it can read the state) and returns an action index. All of
them only ever pick actions the mask allows.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from parity.engines import Engine, Outcome

MOVES = {0: (1, 0), 1: (-1, 0), 2: (0, -1), 3: (0, 1)}  # up adds a row (observation.md §1)
RESET_ACTION = 19

# Fuzz bias: programs and the siphon are rarer in random play but hold most of the rules.
BIASED_WEIGHTS = np.array([1.0] * 4 + [3.0] + [4.0] * 23)


def sample_masked(
    rng: np.random.Generator, mask: np.ndarray, weights: np.ndarray | None = None
) -> int:
    weights = np.ones(len(mask)) if weights is None else weights
    p = np.where(mask, weights, 0.0)
    if p.sum() <= 0:
        raise ValueError("no allowed action to choose from (the episode is over)")
    return int(rng.choice(len(mask), p=p / p.sum()))


def sample_masked_batch(
    rng: np.random.Generator, masks: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """One weighted masked draw per row; rows with an all-false mask get action 0."""
    p = np.where(masks, weights[None, :], 0.0)
    totals = p.sum(axis=1, keepdims=True)
    cumulative = np.cumsum(p, axis=1) / np.where(totals > 0, totals, 1.0)
    u = rng.random((len(masks), 1))
    return np.minimum((cumulative <= u).sum(axis=1), masks.shape[1] - 1).astype(np.int32)


class RandomPolicy:
    """Uniform (or weighted) choice among allowed actions."""

    def __init__(self, seed: int, weights: np.ndarray | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.weights = weights

    def __call__(self, outcome: Outcome, engine: Engine) -> int:
        return sample_masked(self.rng, outcome.mask, self.weights)


class ScriptedPolicy:
    """Plays a fixed list of actions, then stops (returns None)."""

    def __init__(self, actions: list[int]) -> None:
        self.actions = list(actions)
        self.position = 0

    def __call__(self, outcome: Outcome, engine: Engine) -> int | None:
        if self.position >= len(self.actions):
            return None
        action = self.actions[self.position]
        self.position += 1
        return action


def exit_distances(state: dict) -> dict[tuple[int, int], int]:
    """BFS distance to the exit over cells without a block (enemies count as passable)."""
    blocked = {(b["row"], b["col"]) for b in state.get("blocks", [])}
    exit_cell = (state["exit"]["row"], state["exit"]["col"])
    dist = {exit_cell: 0}
    queue = deque([exit_cell])
    while queue:
        r, c = queue.popleft()
        for dr, dc in MOVES.values():
            nxt = (r + dr, c + dc)
            if 0 <= nxt[0] < 6 and 0 <= nxt[1] < 6 and nxt not in dist and nxt not in blocked:
                dist[nxt] = dist[(r, c)] + 1
                queue.append(nxt)
    return dist


class GreedyExitPolicy:
    """Heads for the exit along a shortest path (attacking whatever stands in the
    line), heals with RESET when it can, and otherwise plays randomly with a
    small probability so different seeds see different situations."""

    def __init__(self, seed: int, explore: float = 0.1) -> None:
        self.rng = np.random.default_rng(seed)
        self.explore = explore

    def __call__(self, outcome: Outcome, engine: Engine) -> int:
        mask = outcome.mask
        if self.rng.random() < self.explore:
            return sample_masked(self.rng, mask, BIASED_WEIGHTS)
        state = engine.get_state()
        if mask[RESET_ACTION] and state["player"]["hp"] < 2:
            return RESET_ACTION
        dist = exit_distances(state)
        here = (state["player"]["row"], state["player"]["col"])
        best, best_distance = None, dist.get(here, 99)
        for action, (dr, dc) in MOVES.items():
            target = (here[0] + dr, here[1] + dc)
            if mask[action] and dist.get(target, 99) < best_distance:
                best, best_distance = action, dist[target]
        if best is not None:
            return best
        return sample_masked(self.rng, mask, BIASED_WEIGHTS)


class CheckpointPolicy:
    """A trained network from a trainer checkpoint (training.md §4.1, §4.7).

    Loading, architecture detection and masked action choice are the viewer's
    (``hackmatrix.render.agent_policy``), so a recording plays exactly what
    the viewer would show. ``greedy`` takes the argmax of the masked logits;
    otherwise an action is sampled from the masked softmax with ``seed``.
    Bad paths raise ``PolicyLoadError`` with the file named.
    """

    def __init__(self, path, *, greedy: bool = True, seed: int = 0) -> None:
        from parity.jaxsetup import configure_jax

        configure_jax()  # the network runs on the same CPU backend as the JAX engine
        from hackmatrix.render.agent_policy import load_policy

        self.network = load_policy(path, seed=seed)
        self.greedy = greedy

    @property
    def source(self) -> str:
        return self.network.source

    def __call__(self, outcome: Outcome, engine: Engine) -> int:
        return self.network.act(outcome.obs, outcome.mask, greedy=self.greedy)
