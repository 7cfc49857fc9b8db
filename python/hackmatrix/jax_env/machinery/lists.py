"""List semantics over fixed slots: stable compaction (removal)."""

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp

from ..constants import MAX_OCCUPANTS
from . import slots


def compact(record: Any, keep: jax.Array, fields: Sequence[str]) -> Any:
    """Keep the slots where `keep` is true (a subset of the active ones), closing gaps in order.

    `record` is a flax.struct dataclass holding the list's fields: `fields[0]`
    is the list's `active` mask, the others its per-slot fields.
    A prefix count (slots.count_before) gives each kept slot its new position;
    a scatter (cheaper than a sort on CPU) moves it there. Freed slots at the
    end keep stale values but are inactive.
    """
    dest = jnp.where(keep, slots.count_before(keep), MAX_OCCUPANTS)
    updates = {
        f: getattr(record, f).at[dest].set(getattr(record, f), mode="drop") for f in fields[1:]
    }
    updates[fields[0]] = jnp.arange(MAX_OCCUPANTS) < slots.count(keep)
    return record.replace(**updates)
