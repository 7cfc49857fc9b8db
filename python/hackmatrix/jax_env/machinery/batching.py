"""Run an expensive per-env function only for the envs that need it.

Under `vmap` a `lax.cond` becomes a select that evaluates both branches for
every env. Stage generation is by far the most expensive piece of the game
(block layouts are searched attempt by attempt) but is needed rarely: on a
stage completion, or for an env that is being reset. `where_needed` gives such
a function a custom batching rule that gathers the envs that need it into
chunks, runs it only on them and scatters the results back.
"""

from collections.abc import Callable
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap

from . import form
from .trees import select

Tree = TypeVar("Tree")


def chunk_size(batch: int) -> int:
    """Envs per chunk: a small share of the batch (most steps need few or none)."""
    return max(1, min(batch, 8 + batch // 32))


def apply_compacted(
    fn: Callable[..., Any],
    need: jax.Array,
    args: Any,
    base: Tree,
    extra: Any = None,
    masked: bool | None = None,
) -> Tree:
    """For a batch: base[i] <- fn(args[i]) wherever need[i], fn run on chunks of needing envs.

    With `args` None, fn reads base[i] itself: rows not yet processed still
    hold their inputs, and the loop can then update `base` in place instead
    of copying it (it would have to keep the original for the gathers).
    With `extra` (a batched pytree read but not returned, e.g. the UNDO
    history), fn is called as fn(args[i], extra[i]); extra stays out of the
    loop's carry, so only the chunk's rows of it are ever read.

    In the masked form (machinery/form.py; `masked` None: the current form)
    fn runs for every env and a select keeps its result where needed: no
    loop, no gathers, no scatters.
    """
    if form.masked() if masked is None else masked:
        return _apply_masked(fn, need, args, base, extra)
    batch = need.shape[0]
    size = chunk_size(batch)

    def pending(carry: tuple[jax.Array, Tree]) -> jax.Array:
        return jnp.any(carry[0])

    def one_chunk(carry: tuple[jax.Array, Tree]) -> tuple[jax.Array, Tree]:
        need, base = carry
        idx = jnp.nonzero(need, size=size, fill_value=batch)[0]
        safe = jnp.where(idx < batch, idx, 0)

        def pick(tree: Any) -> Any:
            return jax.tree_util.tree_map(lambda x: x[safe], tree)

        inputs = pick(base if args is None else args)
        out = jax.vmap(fn)(inputs) if extra is None else jax.vmap(fn)(inputs, pick(extra))
        base = jax.tree_util.tree_map(lambda b, o: b.at[idx].set(o, mode="drop"), base, out)
        return need.at[idx].set(False, mode="drop"), base

    return jax.lax.while_loop(pending, one_chunk, (need, base))[1]


def _apply_masked(
    fn: Callable[..., Any], need: jax.Array, args: Any, base: Tree, extra: Any
) -> Tree:
    """apply_compacted's result computed for the whole batch and selected."""
    inputs = base if args is None else args
    out = jax.vmap(fn)(inputs) if extra is None else jax.vmap(fn)(inputs, extra)

    def keep(o: jax.Array, b: jax.Array) -> jax.Array:
        return jnp.where(need.reshape(need.shape + (1,) * (b.ndim - 1)), o, b)

    return jax.tree_util.tree_map(keep, out, base)


def _batched(axis_size: int, tree: Any, batched: Any) -> Any:
    """Give every leaf that custom_vmap passed unbatched a leading batch axis."""
    return jax.tree_util.tree_map(
        lambda leaf, b: leaf if b else jnp.broadcast_to(leaf, (axis_size,) + jnp.shape(leaf)),
        tree,
        tuple(batched),
    )


def _all_batched(tree: Any) -> Any:
    return jax.tree_util.tree_map(lambda _: True, tree)


def where_needed(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`gated(need, value, reads=(), default=None)`: fn for one env, only where `need`.

    - Without `default`: `fn(value, *reads)` if need else `value` (fn keeps
      value's structure).
    - With `default`: fn returns a pair (new value, outputs); an env that
      does not need it gets `(value, default)`.

    `reads` are only read, never returned: under vmap they stay out of the
    loop's carry and only the needing envs' rows of them are gathered, while
    `value` (and `default`) are updated in place. The form (gathered or
    masked) is the one current when `gated` is traced: vmap applies the
    batching rule later, so each form has its own rule.
    """
    rules = {masked: _gated(fn, masked) for masked in (False, True)}

    def call(need: jax.Array, value: Any, reads: tuple = (), default: Any = None) -> Any:
        return rules[form.masked()](need, value, tuple(reads), default)

    return call


def _gated(fn: Callable[..., Any], masked: bool) -> Any:
    """where_needed's function for one form: a cond, batched by apply_compacted."""

    @custom_vmap
    def gated(need: jax.Array, value: Any, reads: tuple, default: Any) -> Any:
        if default is None:
            return jax.lax.cond(need, lambda v, r: fn(v, *r), lambda v, _: v, value, reads)
        return jax.lax.cond(
            need, lambda v, r, _: fn(v, *r), lambda v, _, d: (v, d), value, reads, default
        )

    @gated.def_vmap
    def _rule(
        axis_size: int, in_batched: Any, need: Any, value: Any, reads: tuple, default: Any
    ) -> tuple[Any, Any]:
        need, value, reads, default = _batched(axis_size, (need, value, reads, default), in_batched)
        if default is None:
            out = apply_compacted(lambda v, r: fn(v, *r), need, None, value, reads, masked)
        else:
            out = apply_compacted(
                lambda vd, r: fn(vd[0], *r), need, None, (value, default), reads, masked
            )
        return out, _all_batched(out)

    return gated


def select_rare(pred: jax.Array, on_true: Tree, on_false: Tree) -> Tree:
    """Pytree jnp.where(pred, on_true, on_false) for a `pred` that is rarely true across a batch.

    Under vmap, in the gathered form, only the rows where pred holds are
    copied from `on_true` into `on_false` (in place), instead of reading and
    writing every row of both; in the masked form it is the plain select.
    """
    return _SELECT_RARE[form.masked()](pred, on_true, on_false)


def _select_rare_for(masked: bool) -> Any:
    @custom_vmap
    def select_rare(pred: Any, on_true: Any, on_false: Any) -> Any:
        return select(pred, on_true, on_false)

    @select_rare.def_vmap
    def _rule(
        axis_size: int, in_batched: Any, pred: Any, on_true: Any, on_false: Any
    ) -> tuple[Any, Any]:
        pred, on_true, on_false = _batched(axis_size, (pred, on_true, on_false), in_batched)
        out = apply_compacted(lambda x: x, pred, on_true, on_false, masked=masked)
        return out, _all_batched(on_false)

    return select_rare


_SELECT_RARE = {masked: _select_rare_for(masked) for masked in (False, True)}
