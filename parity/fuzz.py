"""Differential fuzzing: many episodes through the JAX engine in lock-step
(vmap), each then replayed through a Swift CLI process and compared step by
step; what diverges is replayed in detail, shrunk, and written as a trace.

Episodes start either from ``reset(seed)`` or from a "rich" ``setState``
start: the same reset board with many programs, plenty of credits, energy and
siphons and a random stage, so that programs, enemy types and late stages
are reached quickly. Actions are random among the allowed ones, biased toward
programs and the siphon.

The Swift side gets each episode's whole request list at once (no round trip
per step); observations, masks, rewards and ``done`` are compared at every
step, the full state every ``state_every`` steps and at the end.
"""

from __future__ import annotations

import copy
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hackmatrix.names import REWARD_COMPONENT_NAMES
from parity.compare import COMPONENT_TOLERANCE, Difference, state_differences, total_within
from parity.coverage import Coverage
from parity.policies import BIASED_WEIGHTS, sample_masked_batch
from parity.trace import StepLine, Trace, obs_digest, write_trace


@dataclass
class FuzzConfig:
    episodes: int = 256
    batch: int = 256
    max_steps: int = 200
    seed: int = 0
    rich_fraction: float = 0.5
    state_every: int = 25
    workers: int = 2
    found_dir: Path | None = None  # where shrunk diverging traces go (None: not written)
    max_divergences: int = 3


@dataclass
class Episode:
    seed: int
    start_state: dict | None
    actions: list[int] = field(default_factory=list)
    digests: list[str] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    components: list[np.ndarray] = field(default_factory=list)
    dones: list[bool] = field(default_factory=list)
    states: dict[int, dict] = field(default_factory=dict)  # step index -> JAX state after it
    start_digest: str = ""
    start_mask: np.ndarray | None = None

    def trace(self, steps: int | None = None, note: str = "") -> Trace:
        actions = self.actions if steps is None else self.actions[:steps]
        seed = self.seed if self.start_state is None else self.start_state.get("seed", 0)
        return Trace(
            seed=seed,
            source="manual",
            note=note,
            start_state=self.start_state,
            steps=[StepLine(step=i, action=a) for i, a in enumerate(actions)],
        )


@dataclass
class FuzzResult:
    episodes: int = 0
    steps: int = 0
    divergences: list = field(default_factory=list)  # parity.replay.Divergence
    found_traces: list[Path] = field(default_factory=list)
    coverage: Coverage = field(default_factory=Coverage)
    jax_seconds: float = 0.0  # wall time until the JAX side had played every episode
    swift_seconds: float = 0.0  # summed busy time of the Swift verification workers
    wall_seconds: float = 0.0


def rich_state(base: dict, rng: np.random.Generator) -> dict:
    """A reset board made rich: many programs, credits, energy, siphons, a random stage."""
    state = copy.deepcopy(base)
    stage = int(rng.integers(1, 9))
    player = state["player"]
    player["credits"] = int(rng.integers(10, 61))
    player["energy"] = int(rng.integers(10, 61))
    player["dataSiphons"] = int(rng.integers(0, 6))
    player["attackDamage"] = int(rng.integers(1, 3))
    count = int(rng.integers(8, 24))
    state["ownedPrograms"] = sorted(
        int(a) for a in rng.choice(np.arange(5, 28), count, replace=False)
    )
    state["stage"] = stage
    state["scheduledTaskInterval"] = 13 - stage
    state["nextScheduledTaskTurn"] = 13 - stage
    return state


class JaxBatch:
    """The JAX engine over a batch of episodes (vmapped, jitted once per batch size)."""

    def __init__(self) -> None:
        from parity.jaxsetup import configure_jax

        configure_jax()
        import jax

        from hackmatrix import jax_env

        self.jax, self.env = jax, jax_env
        self.params = jax_env.EnvParams()
        self._reset = jax.jit(jax_env.reset_from_seed)

        def observe(state):
            return jax_env.flatten_observation(jax_env.observe(state)), jax_env.action_mask(state)

        def step(key, state, action, params):
            obs, state, reward, done, info = jax_env.step(key, state, action, params)
            return obs, state, reward, done, info, jax_env.action_mask(state)

        self._observe = jax.jit(jax.vmap(observe))
        self._step = jax.jit(jax.vmap(step, in_axes=(None, 0, 0, None)))
        self._key = jax.random.PRNGKey(0)

    def single_reset(self, seed: int):
        import jax.numpy as jnp

        return self._reset(jnp.uint32(seed), self.params)[1]

    def stack(self, states):

        # numpy leaves first: a state from state_from_json and one from reset then share one
        # (non-weak) jit signature.
        return self.jax.device_put(
            self.jax.tree.map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *states)
        )

    def observe(self, states):
        obs, mask = self._observe(states)
        return np.asarray(obs), np.asarray(mask)

    def step(self, states, actions):
        import jax.numpy as jnp

        obs, states, reward, done, info, mask = self._step(
            self._key, states, jnp.asarray(actions), self.params
        )
        info = self.jax.device_get(info)
        components = np.stack(
            [np.asarray(info["reward_components"][k], np.float64) for k in REWARD_COMPONENT_NAMES],
            axis=1,
        )
        return (
            states,
            np.asarray(obs),
            np.asarray(mask),
            np.asarray(reward, np.float64),
            np.asarray(done),
            components,
            np.asarray(info["invalid_action"]),
        )

    def state_json(self, host_states, index: int) -> dict:
        return self.env.state_to_json(self.jax.tree.map(lambda x: x[index], host_states))


def _digests(obs: np.ndarray) -> list[str]:
    return [obs_digest(row) for row in obs]


def _host_with_rows(batch: JaxBatch, states, rows: dict[int, object]):
    """The batched state with the given rows replaced by single-episode states."""
    host = batch.jax.tree.map(np.array, batch.jax.device_get(states))
    for i, single in rows.items():

        def put(leaf, value, i=i):
            leaf[i] = np.asarray(value)
            return leaf

        host = batch.jax.tree.map(put, host, single)
    return batch.jax.device_put(host)


def jax_episodes(batch: JaxBatch, config: FuzzConfig, rng: np.random.Generator, coverage: Coverage):
    """Plays ``config.episodes`` episodes, ``config.batch`` at a time in lock-step, and yields
    each one as soon as it ends (done, or ``max_steps`` reached). A finished slot is refilled
    with a new episode at once, so the batch stays full."""
    size = min(config.batch, config.episodes)
    pending = config.episodes

    def new_episode():
        nonlocal pending
        pending -= 1
        seed, state = make_starts(batch, rng, 1, config.rich_fraction)[0]
        single = batch.env.state_from_json(state) if state is not None else batch.single_reset(seed)
        return Episode(seed=seed, start_state=state), single

    slots, singles = zip(*(new_episode() for _ in range(size)))
    slots = list(slots)
    states = batch.stack(singles)
    obs, mask = batch.observe(states)
    fresh = list(range(size))
    active = np.ones(size, bool)
    while active.any():
        for i in fresh:
            slots[i].start_digest, slots[i].start_mask = obs_digest(obs[i]), mask[i].copy()
            coverage.add_starts(obs[i][None])
            active[i] = mask[i].any()
        fresh = []
        actions = sample_masked_batch(rng, mask, BIASED_WEIGHTS)
        states, obs, mask, reward, done, components, invalid = batch.step(states, actions)
        live = np.flatnonzero(active)
        coverage.add_steps(actions[live], obs[live], components[live], done[live])
        host, refills = None, {}
        for i in live:
            episode = slots[i]
            t = len(episode.actions)
            if invalid[i]:
                raise RuntimeError(
                    f"JAX refused action {actions[i]} that its own mask allowed "
                    f"(episode seed {episode.seed}, step {t})"
                )
            episode.actions.append(int(actions[i]))
            episode.digests.append(obs_digest(obs[i]))
            episode.masks.append(mask[i].copy())
            episode.rewards.append(float(reward[i]))
            episode.components.append(components[i])
            episode.dones.append(bool(done[i]))
            finished = bool(done[i]) or t + 1 >= config.max_steps
            if finished or (config.state_every and (t + 1) % config.state_every == 0):
                if host is None:
                    host = batch.jax.device_get(states)
                episode.states[t] = batch.state_json(host, int(i))
            if finished:
                yield episode
                active[i] = False
                if pending > 0:
                    slots[i], refills[i] = new_episode()
        if refills:
            states = _host_with_rows(batch, states, refills)
            obs, mask = batch.observe(states)
            fresh = list(refills)
            active[fresh] = True


def _step_mismatch(response: dict, episode: Episode, t: int) -> list[Difference]:
    from parity.engines import swift_obs_digest

    if "error" in response:
        return [Difference("action accepted", str(response["error"]), "accepted")]
    diffs = []
    if swift_obs_digest(response) != episode.digests[t]:
        diffs.append(Difference("obs_digest", swift_obs_digest(response), episode.digests[t]))
    info = response["info"]
    if not np.array_equal(np.asarray(info["action_mask"], bool), episode.masks[t]):
        diffs.append(Difference("mask", info["action_mask"], episode.masks[t].tolist()))
    for k, value in zip(REWARD_COMPONENT_NAMES, episode.components[t]):
        if abs(info["reward_components"][k] - value) > COMPONENT_TOLERANCE:
            diffs.append(Difference(f"reward_components.{k}", info["reward_components"][k], value))
    if not total_within(response["reward"], episode.rewards[t]):
        diffs.append(Difference("reward", response["reward"], episode.rewards[t]))
    if response["done"] != episode.dones[t]:
        diffs.append(Difference("done", response["done"], episode.dones[t]))
    return diffs


def verify_on_swift(pipe, episode: Episode) -> tuple[int, list[Difference]] | None:
    """First step (-1 = start) where Swift disagrees with the JAX record, or None.

    Observations are compared by the digest Swift computes itself (``obsDigest``,
    protocol.md §5.9) against the JAX one: no Python encoding on this fast path."""
    from parity.engines import swift_obs_digest

    requests = [
        {"action": "setState", "state": episode.start_state, "obsDigest": True}
        if episode.start_state is not None
        else {"action": "reset", "seed": episode.seed, "obsDigest": True}
    ]
    kinds = [("start", -1)]
    for t, action in enumerate(episode.actions):
        requests.append({"action": "step", "actionIndex": action, "obsDigest": True})
        kinds.append(("step", t))
        if t in episode.states:
            requests.append({"action": "getState"})
            kinds.append(("state", t))
    for (kind, t), response in zip(kinds, pipe.exchange(requests)):
        if kind == "start":
            if "error" in response:
                return -1, [Difference("start accepted", str(response["error"]), "accepted")]
            diffs = []
            if swift_obs_digest(response) != episode.start_digest:
                diffs.append(
                    Difference("obs_digest", swift_obs_digest(response), episode.start_digest)
                )
            if not np.array_equal(
                np.asarray(response["info"]["action_mask"], bool), episode.start_mask
            ):
                diffs.append(Difference("mask", "swift", "jax"))
        elif kind == "step":
            diffs = _step_mismatch(response, episode, t)
        else:
            diffs = state_differences(response.get("state"), episode.states[t])
        if diffs:
            return t, diffs
    return None


def _investigate(
    episode: Episode,
    step: int,
    fast_diffs: list[Difference],
    config: FuzzConfig,
    result: FuzzResult,
    binary,
) -> None:
    """Detailed lock-step replay of a diverging episode, then shrink and write it."""
    from parity.engines import JaxAdapter, SwiftAdapter
    from parity.replay import Divergence, replay
    from parity.shrink import shrink

    swift, jax_engine = SwiftAdapter(binary), JaxAdapter()
    try:
        trace = episode.trace(
            max(step, -1) + 1, note=f"fuzz seed {config.seed}, episode seed {episode.seed}"
        )
        divergence = replay(trace, swift, jax_engine).divergence
        if divergence is None:  # only the pipelined check saw it: report what it saw
            trace.note += " (the detailed replay did not reproduce this)"
            divergence = Divergence(
                trace.name,
                step,
                trace.actions[step] if step >= 0 else None,
                "swift",
                "jax",
                fast_diffs,
            )
            result.divergences.append(divergence)
            return
        if config.found_dir is not None:
            small = shrink(
                trace, divergence, lambda t: replay(t, swift, jax_engine).divergence, swift
            )
            index = len(result.found_traces)
            path = write_trace(
                small, Path(config.found_dir) / f"fuzz-{config.seed}-{episode.seed}-{index}.jsonl"
            )
            small.path = str(path)
            result.found_traces.append(path)
            divergence = replay(small, swift, jax_engine).divergence or divergence
        result.divergences.append(divergence)
    finally:
        swift.close()
        jax_engine.close()


def make_starts(batch: JaxBatch, rng: np.random.Generator, count: int, rich_fraction: float):
    starts = []
    for _ in range(count):
        seed = int(rng.integers(0, 2**32))
        if rng.random() < rich_fraction:
            base = batch.env.state_to_json(batch.single_reset(seed))
            starts.append((seed, rich_state(base, rng)))
        else:
            starts.append((seed, None))
    return starts


def fuzz(config: FuzzConfig, binary=None) -> FuzzResult:
    import queue

    from parity.swift_pipe import SwiftPipe

    if binary is None:
        from hackmatrix.swift_bridge.binary import find_binary

        binary = find_binary()
    rng = np.random.default_rng(config.seed)
    result = FuzzResult()
    batch = JaxBatch()
    pipes: queue.Queue = queue.Queue()
    for _ in range(config.workers):
        pipes.put(SwiftPipe(binary))

    def verify(episode: Episode):
        pipe = pipes.get()
        began = time.perf_counter()
        try:
            return episode, verify_on_swift(pipe, episode), time.perf_counter() - began
        finally:
            pipes.put(pipe)

    began = time.perf_counter()
    try:
        with ThreadPoolExecutor(max_workers=config.workers) as pool:
            futures = [
                pool.submit(verify, episode)
                for episode in jax_episodes(batch, config, rng, result.coverage)
            ]
            result.jax_seconds = time.perf_counter() - began
            for future in futures:
                episode, verdict, seconds = future.result()
                result.swift_seconds += seconds
                result.episodes += 1
                result.steps += len(episode.actions)
                if verdict is not None and len(result.divergences) < config.max_divergences:
                    _investigate(episode, verdict[0], verdict[1], config, result, binary)
    finally:
        while not pipes.empty():
            pipes.get().close()
    result.wall_seconds = time.perf_counter() - began
    return result
