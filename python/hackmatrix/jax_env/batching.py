"""Run an expensive per-env function only for the envs that need it.

Under `vmap` a `lax.cond` becomes a select that evaluates both branches for
every env. Stage generation is by far the most expensive piece of the game
(block layouts are searched attempt by attempt) but is needed rarely: on a
stage completion, or for an env that is being reset. `where_needed` gives such
a function a custom batching rule that gathers the envs that need it into
chunks, runs it only on them and scatters the results back.
"""

import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap


def chunk_size(batch):
    """Envs per chunk: a small share of the batch (most steps need few or none)."""
    return max(1, min(batch, 8 + batch // 32))


def apply_compacted(fn, need, args, base, extra=None):
    """For a batch: base[i] <- fn(args[i]) wherever need[i], evaluating fn in chunks of needing envs.

    With `args` None, fn reads base[i] itself: rows not yet processed still
    hold their inputs, and the loop can then update `base` in place instead
    of copying it (it would have to keep the original for the gathers).
    With `extra` (a batched pytree read but not returned, e.g. the UNDO
    history), fn is called as fn(args[i], extra[i]); extra stays out of the
    loop's carry, so only the chunk's rows of it are ever read.
    """
    batch = need.shape[0]
    size = chunk_size(batch)

    def pending(carry):
        return jnp.any(carry[0])

    def one_chunk(carry):
        need, base = carry
        idx = jnp.nonzero(need, size=size, fill_value=batch)[0]
        safe = jnp.where(idx < batch, idx, 0)
        pick = lambda tree: jax.tree_util.tree_map(lambda x: x[safe], tree)  # noqa: E731
        inputs = pick(base if args is None else args)
        out = jax.vmap(fn)(inputs) if extra is None else jax.vmap(fn)(inputs, pick(extra))
        base = jax.tree_util.tree_map(lambda b, o: b.at[idx].set(o, mode="drop"), base, out)
        return need.at[idx].set(False, mode="drop"), base

    return jax.lax.while_loop(pending, one_chunk, (need, base))[1]


def _batched(axis_size, tree, batched):
    """Give every leaf that custom_vmap passed unbatched a leading batch axis."""
    return jax.tree_util.tree_map(
        lambda leaf, b: leaf if b else jnp.broadcast_to(leaf, (axis_size,) + jnp.shape(leaf)),
        tree,
        tuple(batched),
    )


def _all_batched(tree):
    return jax.tree_util.tree_map(lambda _: True, tree)


def where_needed(fn):
    """g(need, x) = fn(x) if need else x, for fn: pytree -> pytree of the same structure."""

    @custom_vmap
    def gated(need, x):
        return jax.lax.cond(need, fn, lambda y: y, x)

    @gated.def_vmap
    def _rule(axis_size, in_batched, need, x):
        need, x = _batched(axis_size, (need, x), in_batched)
        return apply_compacted(fn, need, None, x), _all_batched(x)

    return gated


def where_needed_reading(fn):
    """g(need, x, extra) = fn(x, extra) if need else x; `extra` is only read (see apply_compacted)."""

    @custom_vmap
    def gated(need, x, extra):
        return jax.lax.cond(need, fn, lambda y, _: y, x, extra)

    @gated.def_vmap
    def _rule(axis_size, in_batched, need, x, extra):
        need, x, extra = _batched(axis_size, (need, x, extra), in_batched)
        return apply_compacted(fn, need, None, x, extra), _all_batched(x)

    return gated


def select_rare(pred, on_true, on_false):
    """Pytree jnp.where(pred, on_true, on_false) for a `pred` that is rarely true across a batch.

    Under vmap only the rows where pred holds are copied from `on_true` into
    `on_false` (in place), instead of reading and writing every row of both.
    """
    return _select_rare(pred, on_true, on_false)


@custom_vmap
def _select_rare(pred, on_true, on_false):
    return jax.tree_util.tree_map(lambda a, b: jnp.where(pred, a, b), on_true, on_false)


@_select_rare.def_vmap
def _select_rare_rule(axis_size, in_batched, pred, on_true, on_false):
    pred, on_true, on_false = _batched(axis_size, (pred, on_true, on_false), in_batched)
    return apply_compacted(lambda x: x, pred, on_true, on_false), _all_batched(on_false)
