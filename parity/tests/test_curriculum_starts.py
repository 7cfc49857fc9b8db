"""Curriculum starts (jax_env/curriculum.py): default params are the canonical game bit for bit,
curriculum starts follow their distributions, and every start is a legal state that loads
into the Swift CLI through setState and replays identically in both engines."""

from __future__ import annotations

import numpy as np
import pytest

from parity.jaxsetup import configure_jax
from parity.policies import BIASED_WEIGHTS, RandomPolicy
from parity.record import record
from parity.replay import replay

configure_jax()
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from hackmatrix import jax_env  # noqa: E402
from hackmatrix.jax_env.curriculum import apply_curriculum, curriculum_params  # noqa: E402
from hackmatrix.jax_env.generation import starting_state  # noqa: E402

SEEDS = np.array([0, 1, 2, 7, 99, 12345, 2**31, 2**32 - 1], np.uint32)
# Covers every stage, all / some / no programs and small and large resource ranges.
MIXED = curriculum_params(
    1.0,
    [1] * 8,
    programs=(0, 23),
    credits=(0, 40),
    energy=(0, 40),
    data_siphons=(0, 3),
    transmissions=(0, 6),
)
LATE = curriculum_params(
    1.0, [0, 0, 0, 0, 0, 1, 1, 2], programs=(23, 23), credits=(100, 200), energy=(50, 60)
)


def _same_tree(a, b) -> bool:
    return all(jax.tree.leaves(jax.tree.map(lambda x, y: bool(np.array_equal(x, y)), a, b)))


@pytest.fixture(scope="module")
def batched_reset():
    """reset_from_seed over a batch of seeds; params None is the path without any curriculum."""
    return jax.jit(jax.vmap(jax_env.reset_from_seed, in_axes=(0, None)))


def test_default_params_reset_is_the_canonical_reset(batched_reset):
    seeds = jnp.asarray(SEEDS)
    canonical = batched_reset(seeds, None)
    assert _same_tree(batched_reset(seeds, jax_env.EnvParams()), canonical)
    # A curriculum that always applies but asks for nothing (stage 1, no programs, no extras)
    # changes nothing.
    assert _same_tree(batched_reset(seeds, curriculum_params(1.0)), canonical)


def test_curriculum_starts_follow_their_distributions():
    n = 4000
    weights = np.array([4, 0, 1, 1, 0, 2, 0, 2], np.float64)
    params = curriculum_params(
        0.75,
        weights,
        programs=(2, 5),
        credits=(3, 6),
        energy=(0, 0),
        data_siphons=(1, 2),
        transmissions=(1, 3),
    )
    starts = jax.jit(jax.vmap(lambda s: apply_curriculum(starting_state(s), params)))(
        jnp.arange(n, dtype=jnp.uint32)
    )
    canonical = jax.jit(jax.vmap(starting_state))(jnp.arange(n, dtype=jnp.uint32))
    board, base = starts.board, canonical.board
    owned = np.asarray(board.owned).sum(axis=1)
    extra_credits = np.asarray(board.credits - base.credits)
    on = (np.asarray(starts.stage) != 1) | (
        owned > 0
    )  # every curriculum start here owns >= 2 programs
    assert abs(on.mean() - 0.75) < 4 * np.sqrt(0.75 * 0.25 / n)

    stages = np.asarray(starts.stage)[on]
    expected = weights / weights.sum()
    counts = np.bincount(stages - 1, minlength=8)
    assert counts[weights == 0].sum() == 0
    sigma = np.sqrt(expected * (1 - expected) / len(stages))
    assert np.all(np.abs(counts / len(stages) - expected) <= 4 * sigma + 1e-12), counts
    assert np.array_equal(np.asarray(starts.interval)[on], 13 - stages)

    assert set(owned[on]) == {2, 3, 4, 5}
    assert np.asarray(board.owned)[on].any(axis=0).all()  # every program gets drawn
    assert set(extra_credits[on]) == {3, 4, 5, 6}
    assert np.array_equal(board.energy, base.energy)
    assert set(np.asarray(board.data_siphons - base.data_siphons)[on]) == {1, 2}
    assert set(np.asarray(starts.pending)[on]) == {1, 2, 3}
    assert np.all(np.asarray(starts.pending)[~on] == 0)
    # The other starts are canonical.
    off = ~on
    assert np.all(np.asarray(starts.stage)[off] == 1) and np.all(owned[off] == 0)
    assert np.all(extra_credits[off] == 0) and np.all(np.asarray(starts.interval)[off] == 12)


def test_pending_transmissions_change_nothing_else_of_a_start(batched_reset):
    """Their draw is folded apart from the others: a curriculum without them starts as before."""
    seeds = jnp.asarray(SEEDS)
    without = curriculum_params(0.5, [1] * 8, programs=(0, 9), credits=(0, 30))
    with_them = curriculum_params(
        0.5, [1] * 8, programs=(0, 9), credits=(0, 30), transmissions=(4, 4)
    )
    _, a = batched_reset(seeds, without)
    _, b = batched_reset(seeds, with_them)
    on = np.asarray(b.pending) == 4
    assert 0 < on.sum() < len(SEEDS)  # about half are curriculum starts
    assert np.all(np.asarray(a.pending) == 0) and np.all(np.asarray(b.pending)[~on] == 0)
    assert _same_tree(a, b.replace(pending=a.pending))


def test_pending_transmissions_appear_after_the_first_turn(batched_reset):
    """They come as a siphon's would (§8.7): from-siphon transmissions at the first enemy phase."""
    params = curriculum_params(1.0, transmissions=(3, 3))
    obs, states = batched_reset(jnp.asarray(SEEDS), params)
    assert np.all(np.asarray(states.pending) == 3)
    before = np.asarray(states.board.t_from_siphon & states.board.t_active).sum(axis=1)
    assert np.all(before == 0)
    step = jax.jit(jax.vmap(lambda state, action: jax_env.step(None, state, action)))
    mask = np.asarray(jax.vmap(jax_env.action_mask)(states))
    actions = jnp.asarray(mask[:, :4].argmax(axis=1))  # a legal move (every start has one)
    assert mask[:, :4].any(axis=1).all()
    after = step(states, actions)[1]
    live = np.asarray(after.board.t_from_siphon & after.board.t_active).sum(axis=1)
    finished = np.asarray(after.stage) != np.asarray(states.stage)
    assert np.all(live[~finished] == 3) and np.all(np.asarray(after.pending)[~finished] == 0)


def test_curriculum_stage_is_generated_as_the_engine_generates_it(batched_reset):
    _, states = batched_reset(jnp.asarray(SEEDS), LATE)
    stages = np.asarray(states.stage)
    assert set(stages) <= {6, 7, 8}
    # generateStage of stage s places s starting transmissions; the task clock starts at 13 - s.
    assert np.array_equal(np.asarray(states.board.t_active).sum(axis=1), stages)
    assert np.array_equal(np.asarray(states.next_task_turn), 13 - stages)
    assert np.all(np.asarray(states.board.owned).all(axis=1))
    assert np.all(np.asarray(states.step_index) == 0) and np.all(np.asarray(states.board.hp) == 3)


def test_reset_where_uses_the_curriculum(batched_reset):
    obs, states = batched_reset(jnp.asarray(SEEDS[:4]), None)
    done = jnp.array([True, False, True, False])
    key = jax.random.PRNGKey(5)
    new_obs, new_states = jax.jit(jax_env.reset_where)(key, done, obs, states, LATE)
    seeds = jax.random.bits(key, (4,), jnp.uint32)
    fresh_obs, fresh = batched_reset(seeds, LATE)
    for i in range(4):
        source = (fresh_obs, fresh) if bool(done[i]) else (obs, states)

        def env_i(tree, i=i):
            return jax.tree.map(lambda t: t[i], tree)

        assert _same_tree(env_i((new_obs, new_states)), env_i(source))
    assert np.all(np.asarray(new_states.stage)[np.asarray(done)] >= 6)


@pytest.mark.swift
@pytest.mark.parametrize(
    "params, seed", [(MIXED, 3), (MIXED, 41), (MIXED, 2026), (LATE, 5), (LATE, 77)]
)
def test_curriculum_start_loads_into_swift_and_replays_identically(engines, params, seed):
    swift, jax_engine = engines
    _, state = jax.jit(jax_env.reset_from_seed)(jnp.uint32(seed), params)
    start = jax_env.state_to_json(state)
    trace = record(
        jax_engine,
        RandomPolicy(seed, BIASED_WEIGHTS),
        state=start,
        max_steps=30,
        note=f"curriculum start, seed {seed}",
    )
    assert len(trace.steps) >= 5
    result = replay(
        trace, swift, jax_engine
    )  # setState into Swift, then compare every step and state
    assert result.ok, result.divergence.report()
    assert swift.get_state() == jax_engine.get_state()


def test_the_swift_cases_cover_stages_programs_and_resources():
    """The handful of starts above are not all alike.

    Guards against a curriculum that does nothing.
    """
    cases = [(MIXED, 3), (MIXED, 41), (MIXED, 2026), (LATE, 5), (LATE, 77)]
    reset = jax.jit(jax_env.reset_from_seed)
    states = [reset(jnp.uint32(seed), params)[1] for params, seed in cases]
    assert len({int(s.stage) for s in states}) >= 3
    assert len({int(np.asarray(s.board.owned).sum()) for s in states}) >= 3
    assert max(int(s.board.credits) for s in states) >= 100
    assert any(int(s.pending) > 0 for s in states)
