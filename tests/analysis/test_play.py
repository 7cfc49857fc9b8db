"""The one loop every analysis tool plays through (analysis/play.py, training.md §9.9).

A fixed tiny network (weights drawn by numpy, so they do not depend on how XLA compiles
`init`) plays four games greedily. Recording the steps must change nothing that is
played or counted, the recorded steps must add up to the counters, the trajectory
(the GIF's recording) must be the games the behaviour counters saw, and the games
themselves are pinned by a hash: the behaviour evaluation's code before `play` existed
(purejaxrl/behaviour.py's own `play_batch`) gave the same hash.

Two compiles: the behaviour watcher alone without recording, and the behaviour and
trajectory watchers together with recording.
"""

import hashlib
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

from hackmatrix.analysis.choosers import Greedy
from hackmatrix.analysis.facts import FACTS, UNFINISHED, stage_entry_facts
from hackmatrix.analysis.games import play_games
from hackmatrix.analysis.play import TRAJECTORY, GameKeys, play
from hackmatrix.analysis.policies import Policy
from hackmatrix.purejaxrl.network import OBS_SIZE, make_network

jax_env = pytest.importorskip("hackmatrix.jax_env")

GAMES, FIRST, CAP, SEED = 4, 11, 120, 2
# sha256 of the games' integer counters, final stages, seeds and returns in thousandths
# (`games_digest`); the code before `play` gave the same.
PINNED = "7ac3b6ab8154b0b3"


def fixed_network():
    network = make_network(16, 1)
    shapes = jax.eval_shape(network.init, jax.random.PRNGKey(0), jnp.zeros((1, OBS_SIZE)))
    rng = np.random.default_rng(7)
    params = jax.tree_util.tree_map(
        lambda s: (0.2 * rng.standard_normal(s.shape)).astype(np.float32), shapes
    )
    return network, params


@dataclass(frozen=True)
class Both:
    """The behaviour counters and the trajectory, watched in one loop."""

    def start(self, env, env_params, obs, state):
        return (
            FACTS.start(env, env_params, obs, state),
            TRAJECTORY.start(env, env_params, obs, state),
        )

    def add(self, env, counts, step):
        facts, facts_record = FACTS.add(env, counts[0], step)
        trajectory, trajectory_record = TRAJECTORY.add(env, counts[1], step)
        return (facts, trajectory), (facts_record, trajectory_record)


def _play(watcher, record_steps):
    network, params = fixed_network()
    indices = jnp.arange(FIRST, FIRST + GAMES, dtype=jnp.int32)
    # Called as games.play_batch calls it (no record_steps when it is 0: jit keys its cache
    # on the arguments given), so the pinned test's play_games reuses this compile.
    recording = {"record_steps": record_steps} if record_steps else {}
    return jax.device_get(
        play(
            Greedy(network=network, params=params),
            GameKeys.of(jax.random.PRNGKey(SEED), indices),
            jax.vmap(jax.random.PRNGKey)(indices),
            jnp.int32(CAP),
            jax_env.EnvParams(),
            env=jax_env,
            watcher=watcher,
            **recording,
        )
    )


@pytest.fixture(scope="module")
def plain():
    return _play(FACTS, 0)


@pytest.fixture(scope="module")
def recorded():
    return _play(Both(), CAP)


def games_digest(games: dict) -> str:
    parts = [
        np.asarray(games[name]).astype(np.int64).tobytes()
        for name in sorted(games)
        if name != "return" and np.issubdtype(np.asarray(games[name]).dtype, np.integer)
    ]
    thousandths = np.round(np.asarray(games["return"], np.float64) * 1000).astype(np.int64)
    parts.append(thousandths.tobytes())
    return hashlib.sha256(b"".join(parts)).hexdigest()[:16]


def _states_json(states, games):
    return [
        jax_env.state_to_json(jax.tree_util.tree_map(lambda leaf, g=g: leaf[g], states))
        for g in range(games)
    ]


def test_recording_changes_nothing_played_or_counted(plain, recorded):
    facts = recorded["counts"][0]
    assert list(facts) == list(plain["counts"])
    for name, value in plain["counts"].items():
        np.testing.assert_array_equal(facts[name], value, err_msg=name)
    assert int(recorded["steps"]) == int(plain["steps"])
    np.testing.assert_array_equal(recorded["live"], plain["live"])
    assert _states_json(recorded["state"], GAMES) == _states_json(plain["state"], GAMES)


def test_the_recorded_steps_add_up_to_the_counters(plain, recorded):
    totals, steps = plain["counts"], recorded["trace"][0]
    played = int(plain["steps"])
    assert played <= CAP
    first_states = recorded["counts"][1]["start_state"]  # the trajectory keeps them
    start = jax.device_get(
        jax.jit(jax.vmap(stage_entry_facts))(first_states, jnp.ones(GAMES, bool))
    )
    for name, total in totals.items():
        if name == "end":
            ended = steps[name] != UNFINISHED
            assert (ended.sum(0) <= 1).all()  # a game ends once
            code = steps[name][ended.argmax(0), np.arange(GAMES)]
            np.testing.assert_array_equal(np.where(ended.any(0), code, UNFINISHED), total)
        elif name == "return":  # summed step by step in float32, as the loop does
            np.testing.assert_array_equal(np.cumsum(steps[name], 0, dtype=np.float32)[-1], total)
        else:
            summed = steps[name].sum(0) + start.get(name, 0)
            np.testing.assert_array_equal(summed, total, err_msg=name)
    assert not np.any(steps["length"][played:])  # steps never played stay zero


def test_the_trajectory_is_the_games_the_counters_saw(plain, recorded):
    totals, trajectory = plain["counts"], recorded["counts"][1]
    steps = recorded["trace"][1]
    np.testing.assert_array_equal(trajectory["length"], totals["length"])
    np.testing.assert_array_equal(steps["live"].sum(0), totals["length"])
    rewards = np.where(steps["live"], steps["reward"], np.float32(0))
    np.testing.assert_array_equal(np.cumsum(rewards, 0, dtype=np.float32)[-1], totals["return"])
    ended = totals["end"] != UNFINISHED
    np.testing.assert_array_equal(steps["done"].sum(0), ended.astype(int))
    for game in np.flatnonzero(ended):
        assert steps["done"][totals["length"][game] - 1, game]
    # Every action was valid where it was taken; the last state is where the game stands.
    masks = np.concatenate([trajectory["start_mask"][None], steps["mask"][:-1]])
    taken = np.take_along_axis(masks, steps["action"][..., None], -1)[..., 0]
    assert taken[steps["live"]].all()
    played = int(plain["steps"])
    last = jax.tree_util.tree_map(lambda leaf: leaf[played - 1], steps["state"])
    assert _states_json(last, GAMES) == _states_json(plain["state"], GAMES)


def test_greedy_games_of_a_fixed_network_are_pinned(plain):
    network, params = fixed_network()
    games = play_games(
        jax_env,
        Policy(label="fixed", network=network, params=params),
        "greedy",
        episodes=GAMES,
        first_game=FIRST,
        max_steps=CAP,
        batch=GAMES,
        seed=SEED,
    )
    games.pop("game_index")
    assert games_digest(games) == PINNED
    state = plain["state"]
    counts = {**plain["counts"], "final_stage": state.stage, "game_seed": state.seed}
    assert games_digest(counts) == PINNED


@struct.dataclass
class FirstValid:
    """A chooser of another kind, as a tree search would be: its own static setting, the
    state at hand, no network."""

    offset: int = struct.field(pytree_node=False, default=0)

    def __call__(self, key, obs, mask, state):
        first = jnp.argmax(jnp.roll(mask, -self.offset, axis=-1), axis=-1)
        return (first + self.offset) % mask.shape[-1]


def test_any_chooser_plugs_in():
    """On the stand-in game (it compiles in seconds): the recorded actions are the
    chooser's, and a different static setting is a different chooser."""
    import standin_env

    def actions(chooser):
        played = play(
            chooser,
            GameKeys(jax.random.split(jax.random.PRNGKey(0), 3)),
            jax.random.split(jax.random.PRNGKey(1), 3),
            jnp.int32(30),
            standin_env.EnvParams(),
            env=standin_env,
            watcher=TRAJECTORY,
            record_steps=30,
        )
        steps = jax.device_get(played["trace"])
        masks = np.concatenate([played["counts"]["start_mask"][None], steps["mask"][:-1]])
        return steps["action"], masks, steps["live"]

    chosen, masks, live = actions(FirstValid())
    np.testing.assert_array_equal(chosen[live], masks.argmax(-1)[live])
    shifted, masks, live = actions(FirstValid(offset=1))
    assert np.take_along_axis(masks, shifted[..., None], -1)[..., 0][live].all()
    assert not np.array_equal(shifted, chosen)
