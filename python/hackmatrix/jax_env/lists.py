"""List semantics over fixed slots: stable compaction (removal) and appending."""

import jax.numpy as jnp

from . import slots
from .constants import MAX_OCCUPANTS

ENEMY_FIELDS = (
    "e_active",
    "e_type",
    "e_pos",
    "e_hp",
    "e_disabled",
    "e_stunned",
    "e_from_siphon",
    "e_from_sched",
    "e_last_known",
)
TRANSMISSION_FIELDS = (
    "t_active",
    "t_pos",
    "t_countdown",
    "t_type",
    "t_from_siphon",
    "t_from_sched",
)


def compact(board, keep, fields):
    """Keep the slots where `keep` is true (a subset of the active ones), closing gaps in order.

    A prefix count (slots.count_before) gives each kept slot its new position;
    a scatter (cheaper than a sort on CPU) moves it there. Freed slots at the end keep stale values but
    are inactive.
    """
    dest = jnp.where(keep, slots.count_before(keep), MAX_OCCUPANTS)
    updates = {
        f: getattr(board, f).at[dest].set(getattr(board, f), mode="drop") for f in fields[1:]
    }
    updates[fields[0]] = jnp.arange(MAX_OCCUPANTS) < slots.count(keep)
    return board.replace(**updates)


def remove_enemies(board, dead):
    return compact(board, board.e_active & ~dead, ENEMY_FIELDS)


def remove_transmissions(board, dead):
    return compact(board, board.t_active & ~dead, TRANSMISSION_FIELDS)


def append_slots(active, count_new):
    """For appending `count_new` entries after the active prefix: their target slot per new index."""
    return slots.count(active) + jnp.arange(count_new, dtype=jnp.int32)
