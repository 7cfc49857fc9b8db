"""The engine's building blocks against plain numpy.

Slot counting, packed history, cell sets and searches, grid helpers, batching rules.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hackmatrix.jax_env as J
from hackmatrix.jax_env import grid, undo
from hackmatrix.jax_env.machinery import bits, slots
from hackmatrix.jax_env.machinery.batching import select_rare, where_needed
from hackmatrix.jax_env.state import ORIGIN_FLAGS, empty_history


def _masks(n, seed=0):
    rng = np.random.default_rng(seed)
    out = [np.zeros(35, bool), np.ones(35, bool)]
    out += [rng.random(35) < rng.random() for _ in range(n)]
    return np.stack(out)


def test_slot_counts_match_numpy():
    masks = _masks(300)
    assert np.array_equal(np.asarray(jax.vmap(slots.count)(masks)), masks.sum(1))
    assert np.array_equal(
        np.asarray(jax.vmap(slots.count_before)(masks)), np.cumsum(masks, 1) - masks
    )
    assert np.array_equal(np.asarray(jax.vmap(slots.first)(masks)), np.argmax(masks, 1))
    assert np.array_equal(np.asarray(jax.vmap(slots.any_true)(masks)), masks.any(1))
    values = (
        np.random.default_rng(1).integers(0, 2**32, (50, 35), dtype=np.uint64).astype(np.uint32)
    )
    assert np.array_equal(
        np.asarray(slots.smallest(jnp.asarray(values), np.uint32(0xFFFFFFFF))), values.min(1)
    )
    ints = np.random.default_rng(2).integers(-5, 100, (50, 35)).astype(np.int32)
    assert np.array_equal(np.asarray(slots.total(jnp.asarray(ints))), ints.sum(1))


def test_cell_bits_round_trip_and_prefix_counts():
    rng = np.random.default_rng(3)
    cells = rng.random((100, 36)) < 0.4
    assert np.array_equal(np.asarray(bits.unpack(bits.pack(jnp.asarray(cells)))), cells)
    assert np.array_equal(np.asarray(bits.any_cell(jnp.asarray(cells))), cells.any(1))
    assert np.array_equal(
        np.asarray(bits.count_before_cells(jnp.asarray(cells))), np.cumsum(cells, 1) - cells
    )


def test_cell_set_algebra_matches_numpy_sets():
    rng = np.random.default_rng(5)
    a, b = rng.random((2, 50, 36)) < 0.5
    pa, pb = bits.pack(jnp.asarray(a)), bits.pack(jnp.asarray(b))
    assert np.array_equal(np.asarray(bits.unpack(pa & pb)), a & b)
    assert np.array_equal(np.asarray(bits.unpack(pa | pb)), a | b)
    assert np.array_equal(np.asarray(bits.unpack(~pa)), ~a)
    assert np.array_equal(np.asarray(pa.intersects(pb)), (a & b).any(1))
    grown = np.asarray(bits.unpack(bits.dilate(pa)))
    want = a.copy()
    for c in range(36):
        neighbours = [n for n in grid.NEIGHBOURS[c] if n < 36]
        want[:, c] = a[:, c] | a[:, neighbours].any(1)
    assert np.array_equal(grown, want)


def test_grid_helpers_agree_with_divmod():
    cells = np.arange(36)
    assert np.array_equal(grid.row(cells), cells // 6) and np.array_equal(
        grid.col(cells), cells % 6
    )
    assert grid.manhattan(0, 35) == 10 and grid.manhattan(14, 14) == 0
    assert np.array_equal(
        grid.DISTANCE,
        np.abs(cells[:, None] // 6 - cells // 6) + np.abs(cells[:, None] % 6 - cells % 6),
    )
    assert grid.RING.sum(1).tolist()[:2] == [3, 5] and not grid.RING[14, 14]
    assert grid.NEIGHBOURS[0].tolist() == [6, 36, 36, 1]  # up is row + 1; 36 is off the board
    assert grid.CROSS[14].tolist() == [14, 20, 8, 13, 15]


def test_first_target_reached_agrees_with_the_layered_search():
    rng = np.random.default_rng(4)
    passable = jnp.asarray(rng.random((300, 36)) < 0.7)
    start = jnp.asarray(rng.integers(0, 36, 300), jnp.int32)
    targets = jnp.asarray(rng.integers(0, 40, (300, 4)), jnp.int32)  # >= 36: an empty target

    def both(p, s, t):
        args = (bits.cell_bits(s), bits.pack(p), [bits.cell_bits(t[k]) for k in range(4)])
        return bits.first_reached(*args)[1], bits.first_target_reached(*args)

    expected, got = jax.jit(jax.vmap(both))(passable, start, targets)
    assert np.array_equal(np.asarray(got), np.asarray(expected))
    assert (np.asarray(got) >= 0).any() and (np.asarray(got) < 0).any()


def test_history_rows_round_trip_every_board_field():
    _, state = jax.jit(J.reset_from_seed)(np.uint32(7))
    board = state.board.replace(
        credits=jnp.asarray(1_000_000),
        e_active=state.board.e_active.at[3].set(True),
        t_from_sched=state.board.t_from_sched.at[0].set(True),
    )
    back = jax.jit(lambda b: undo.unpack_board(undo.pack_board(b)))(board)
    for name in board.__dataclass_fields__:
        original, restored = np.asarray(getattr(board, name)), np.asarray(getattr(back, name))
        if name in ORIGIN_FLAGS:  # snapshots never carry origin flags (protocol.md §6.5)
            original = np.zeros_like(original)
        assert restored.dtype == original.dtype and np.array_equal(restored, original), name


def test_history_push_drops_the_oldest_and_newest_reads_back():
    _, state = jax.jit(J.reset_from_seed)(np.uint32(8))
    h, count, start = empty_history(), jnp.asarray(0), jnp.asarray(0)
    for turn in range(6):
        h, count, start = undo.push(h, count, start, state.board.replace(turn=jnp.asarray(turn)))
    h2, count2, start2 = undo.push(
        h, count, start, state.board.replace(turn=jnp.asarray(99)), pushing=False
    )
    assert (
        np.array_equal(np.asarray(h2), np.asarray(h))
        and int(count2) == int(count)
        and int(start2) == int(start)
    )
    assert int(count) == 4
    assert [int(s["turn"]) for s in undo.snapshots(h, count, start)] == [2, 3, 4, 5]
    assert int(undo.newest(h, count, start).turn) == 5


def _double(x):
    return jax.tree_util.tree_map(lambda v: v * 2, x)


def _add_extra(x, extra):
    return x + extra


def _double_and_count(x, extra):
    return _double(x), jnp.sum(extra)


@pytest.mark.parametrize("batch", [1, 5, 40])
def test_batching_rules_match_their_unbatched_meaning(batch):
    """where_needed (plain, reading, with a default) and select_rare under vmap equal the conds."""
    rng = np.random.default_rng(batch)
    need = jnp.asarray(rng.random(batch) < 0.3)
    x = {
        "a": jnp.asarray(rng.integers(0, 9, (batch, 3)), jnp.int32),
        "b": jnp.asarray(rng.random(batch), jnp.float32),
    }
    extra = jnp.asarray(rng.integers(0, 9, (batch, 3)), jnp.int32)
    other = jax.tree_util.tree_map(lambda v: v + 100, x)

    got = jax.jit(jax.vmap(where_needed(_double)))(need, x)
    got_reading = jax.jit(jax.vmap(lambda n, a, e: where_needed(_add_extra)(n, a, (e,))))(
        need, x["a"], extra
    )
    got_default, got_counts = jax.jit(
        jax.vmap(lambda n, v, e: where_needed(_double_and_count)(n, v, (e,), default=jnp.int32(-1)))
    )(need, x, extra)
    got_select = jax.jit(jax.vmap(select_rare))(need, other, x)
    for i in range(batch):
        n = bool(need[i])
        row = jax.tree_util.tree_map(lambda v, i=i: v[i], x)
        want = _double(row) if n else row
        assert all(np.array_equal(np.asarray(got[k][i]), np.asarray(want[k])) for k in x)
        assert np.array_equal(
            np.asarray(got_reading[i]), np.asarray(row["a"] + extra[i] if n else row["a"])
        )
        assert all(np.array_equal(np.asarray(got_default[k][i]), np.asarray(want[k])) for k in x)
        assert int(got_counts[i]) == (int(jnp.sum(extra[i])) if n else -1)
        picked = jax.tree_util.tree_map(lambda v, i=i: v[i], other) if n else row
        assert all(np.array_equal(np.asarray(got_select[k][i]), np.asarray(picked[k])) for k in x)
    # unbatched calls are plain conds
    assert np.array_equal(np.asarray(where_needed(_double)(True, x)["a"]), np.asarray(x["a"] * 2))
    assert np.array_equal(np.asarray(select_rare(False, other, x)["b"]), np.asarray(x["b"]))
    kept, count = where_needed(_double_and_count)(False, x, (extra[0],), default=jnp.int32(-1))
    assert np.array_equal(np.asarray(kept["a"]), np.asarray(x["a"])) and int(count) == -1


def _cancel_until_stable(moving, occupant):
    """resolveMoves' cascading cancellation as the rules state it: passes until none cancels."""
    moving = moving.copy()
    while True:
        blocked = (occupant >= 0) & ~moving[np.clip(occupant, 0, None)]
        if not (moving & blocked).any():
            return moving
        moving &= ~blocked


def test_keep_unblocked_equals_repeated_cancellation_passes():
    """Pointer doubling keeps the movers the passes keep, for chains, loops and long chains."""
    from hackmatrix.jax_env.programs import keep_unblocked

    rng = np.random.default_rng(51)
    cases = []
    for _ in range(400):
        moving = rng.random(35) < rng.random()
        occupant = np.where(rng.random(35) < 0.6, rng.integers(0, 35, 35), -1)
        cases.append((moving, occupant))
    chain = np.arange(1, 36) % 35  # one loop through all 35 slots
    cases.append((np.ones(35, bool), chain))
    broken = np.ones(35, bool)
    broken[34] = False
    cases.append((broken, np.append(np.arange(1, 35), -1)))  # a 35-long chain ending in a stayer
    keep = jax.jit(jax.vmap(keep_unblocked))
    got = np.asarray(keep(jnp.asarray([m for m, _ in cases]), jnp.asarray([o for _, o in cases])))
    for (moving, occupant), result in zip(cases, got):
        assert np.array_equal(result, _cancel_until_stable(moving, occupant))
