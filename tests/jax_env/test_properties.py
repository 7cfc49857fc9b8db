"""Property tests over many seeds: vmapped random-valid-action episodes, checked every step."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hackmatrix.jax_env as J
from hackmatrix.jax_env.constants import (
    BLOCK,
    DATA_SIPHON,
    EXIT,
    NUM_CELLS,
    RUNNING,
    SPAWN_COST,
)
from hackmatrix.jax_env.grid import CORNERS

BATCH = 128
STEPS = 160


def _invariant_failures(states):
    """Per-env counts of broken invariants (vmapped over a batch)."""

    def one(s):
        b = s.board
        occ = jnp.zeros(NUM_CELLS + 1, jnp.int32)
        occ = occ.at[jnp.where(b.e_active, b.e_pos, NUM_CELLS)].add(1)
        occ = occ.at[jnp.where(b.t_active, b.t_pos, NUM_CELLS)].add(1)
        occ = occ.at[b.player_pos].add(1)
        shared = jnp.any(occ[:NUM_CELLS] > 1)
        negative = (b.hp < 0) | (b.credits < 0) | (b.energy < 0) | (b.data_siphons < 0)
        exit_ok = (
            jnp.isin(s.exit_pos, jnp.asarray(CORNERS))
            & (b.content[s.exit_pos] == EXIT)
            & (jnp.sum(b.content == EXIT) == 1)
        )
        prefix_ok = jnp.all(b.e_active[1:] <= b.e_active[:-1]) & jnp.all(
            b.t_active[1:] <= b.t_active[:-1]
        )
        hp_ok = jnp.all(~b.e_active | (b.e_hp > 0))
        empty_mask = (s.outcome == RUNNING) & ~jnp.any(J.action_mask(s))
        return jnp.stack([shared, negative, ~exit_ok, ~prefix_ok, ~hp_ok, empty_mask]).astype(
            jnp.int32
        )

    return jnp.sum(jax.vmap(one)(states), axis=0)


def _same(a, b):
    """Per env: every leaf of two batched states equal."""
    eq = jax.tree_util.tree_map(
        lambda x, y: jnp.all((x == y).reshape(x.shape[0], -1), axis=1), a, b
    )
    return jnp.all(jnp.stack(jax.tree_util.tree_leaves(eq)), axis=0)


@functools.partial(jax.jit, static_argnums=(2,))
def rollout(seeds, key, steps):
    """Random valid-action play with auto-reset; also steps a masked action on state copies."""
    v_step = jax.vmap(J.step, in_axes=(None, 0, 0))
    v_mask = jax.vmap(J.action_mask)
    obs, states = jax.vmap(J.reset_from_seed)(seeds)
    n = seeds.shape[0]

    def body(carry, k):
        states, obs = carry
        k_valid, k_invalid, k_reset = jax.random.split(k, 3)
        mask = v_mask(states)
        valid = jax.random.categorical(k_valid, jnp.where(mask, 0.0, -jnp.inf))
        bad = jax.random.categorical(k_invalid, jnp.where(mask, -jnp.inf, 0.0))
        bad = jnp.where(jnp.all(mask, axis=1), 28, bad)  # out of range when every action is legal
        both = jax.tree_util.tree_map(lambda x: jnp.concatenate([x, x]), states)
        obs2, stepped, reward, done, info = v_step(None, both, jnp.concatenate([valid, bad]))
        new = jax.tree_util.tree_map(lambda x: x[:n], stepped)
        rejected = jax.tree_util.tree_map(lambda x: x[n:], stepped)
        comps = jnp.stack(jax.tree_util.tree_leaves(info["reward_components"]), axis=1)
        invalid_checks = jnp.stack(
            [
                jnp.sum(~_same(rejected, states)),
                jnp.sum(reward[n:] != 0),
                jnp.sum(done[n:]),
                jnp.sum(~info["invalid_action"][n:]),
                jnp.sum(jnp.any(comps[n:] != 0, axis=1)),
                jnp.sum(info["invalid_action"][:n]),
            ]
        )
        checks = _invariant_failures(new)
        total_ok = jnp.sum(jnp.abs(jnp.sum(comps[:n], axis=1) - reward[:n]) > 1e-3)
        new_obs, new = J.reset_where(k_reset, done[:n], obs2[:n], new)
        return (new, new_obs), (checks, invalid_checks, total_ok, jnp.sum(done[:n]), valid)

    (states, _), out = jax.lax.scan(body, (states, obs), jax.random.split(key, steps))
    return states, out


@pytest.fixture(scope="module")
def play():
    seeds = jnp.arange(BATCH, dtype=jnp.uint32) * 7919 + 11
    return rollout(seeds, jax.random.PRNGKey(3), STEPS)


def test_invariants_hold_every_step(play):
    _, (checks, _, _, episodes, _) = play
    names = [
        "shared cell",
        "negative counter",
        "exit not a single corner EXIT",
        "list not a prefix",
        "enemy with hp 0",
        "running with empty mask",
    ]
    totals = np.asarray(checks).sum(axis=0)
    assert dict(zip(names, totals.tolist())) == dict.fromkeys(names, 0)
    assert int(np.asarray(episodes).sum()) > 0  # episodes do finish and get reset


def test_invalid_actions_change_nothing(play):
    _, (_, invalid_checks, total_ok, _, _) = play
    names = ["state changed", "reward", "done", "not flagged", "component", "valid flagged invalid"]
    assert dict(zip(names, np.asarray(invalid_checks).sum(axis=0).tolist())) == dict.fromkeys(
        names, 0
    )
    assert int(np.asarray(total_ok).sum()) == 0


def test_same_seeds_and_actions_give_same_states(play):
    states, (_, _, _, _, actions) = play
    again, (_, _, _, _, actions2) = rollout(
        jnp.arange(BATCH, dtype=jnp.uint32) * 7919 + 11, jax.random.PRNGKey(3), STEPS
    )
    assert np.array_equal(np.asarray(actions), np.asarray(actions2))
    assert bool(jnp.all(_same(states, again)))


def test_generation_invariants_over_many_seeds():
    seeds = jnp.asarray(np.arange(1024, dtype=np.uint32) * np.uint32(2654435761))
    _, states = jax.jit(jax.vmap(J.reset_from_seed))(seeds)
    b = jax.tree_util.tree_map(np.asarray, states.board)
    exit_pos = np.asarray(states.exit_pos)
    for k in range(seeds.shape[0]):
        block = b.content[k] == BLOCK
        data = block & b.hidden_is_data[k]
        prog = block & ~b.hidden_is_data[k]
        assert np.array_equal(b.spawn_count[k][data], b.points[k][data])
        assert np.array_equal(b.spawn_count[k][prog], SPAWN_COST[b.program[k][prog]])
        assert np.all((b.points[k][data] >= 1) & (b.points[k][data] <= 9))
        assert len(set(b.program[k][prog].tolist())) == int(
            prog.sum()
        )  # programs distinct within a stage
        assert 5 <= block.sum() <= 11 or block.sum() == 0
        corners = set(CORNERS.tolist())
        player = int(b.player_pos[k])
        assert player in corners and int(exit_pos[k]) in corners and player != int(exit_pos[k])
        others = corners - {player, int(exit_pos[k])}
        assert all(b.content[k][c] == DATA_SIPHON for c in others)
        assert not block[list(corners)].any()
        assert (b.cell_credits[k][block] == 0).all() and (b.cell_energy[k][block] == 0).all()
    assert np.asarray(states.board.t_active).sum(axis=1).tolist() == [1] * seeds.shape[0]


# One jitted batch reset and step, at one batch size, for the two tests below: the step's
# compile is one of the suite's longest, so they share it.
BATCHED = 6
V_RESET = jax.jit(jax.vmap(J.reset_from_seed))
V_STEP = jax.jit(jax.vmap(J.HackMatrixEnv.step, in_axes=(None, 0, 0, None)))


def test_batched_step_compiles_and_runs_under_vmap():
    obs, states = V_RESET(jnp.arange(BATCHED, dtype=jnp.uint32) + 7)
    assert obs.shape == (BATCHED, 1545)
    env = J.HackMatrixEnv()
    actions = jnp.argmax(jax.vmap(env.action_mask)(states), axis=1).astype(jnp.int32)
    obs2, states2, reward, done, info = V_STEP(None, states, actions, env.default_params)
    assert obs2.shape == (BATCHED, 1545) and reward.shape == (BATCHED,)
    assert done.shape == (BATCHED,)
    assert set(info["reward_components"]) == set(J.REWARD_COMPONENT_NAMES)
    assert not bool(jnp.any(info["invalid_action"]))
    assert np.array_equal(np.asarray(states2.step_index), np.ones(BATCHED, np.uint32))


def test_batched_steps_match_single_env_steps():
    """The custom batching rules (work only for envs that need it) agree with the unbatched path."""
    from .helpers import STEP

    n = BATCHED
    _, states = V_RESET(jnp.arange(n, dtype=jnp.uint32) + 100)
    params = J.HackMatrixEnv().default_params
    rng = np.random.default_rng(1)
    for _ in range(25):
        masks = np.asarray(jax.vmap(J.action_mask)(states))
        actions = np.array(
            [rng.choice(np.nonzero(m)[0]) if m.any() else 0 for m in masks], np.int32
        )
        _, batched, rewards, _, _ = V_STEP(None, states, jnp.asarray(actions), params)
        for i in range(n):
            single = jax.tree_util.tree_map(lambda x, i=i: x[i], states)
            _, expected, reward, _, _ = STEP(None, single, int(actions[i]))
            got = jax.tree_util.tree_map(lambda x, i=i: x[i], batched)
            assert J.state_to_json(got) == J.state_to_json(expected)
            assert np.float32(rewards[i]) == np.float32(reward)
        states = batched
