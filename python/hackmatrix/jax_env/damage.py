"""Shared removal helpers: damage + stun + removeDead (game-rules.md §5, §7), transmission removal."""

import jax.numpy as jnp

from . import slots
from .lists import remove_enemies, remove_transmissions


def apply_damage(board, damage, stun, kill=None):
    """Every enemy takes damage[i]; survivors of a hit are stunned if `stun`; `kill` removes outright.

    Returns (board, kills) where kills counts removed enemies that are not fromScheduled.
    """
    hit = board.e_active & (damage > 0)
    hp = jnp.where(hit, jnp.maximum(0, board.e_hp - damage), board.e_hp)
    dead = hit & (hp == 0)
    if kill is not None:
        dead = dead | (board.e_active & kill)
    stunned = board.e_stunned | (hit & ~dead & stun)
    kills = slots.count(dead & ~board.e_from_sched)
    board = board.replace(e_hp=hp, e_stunned=stunned)
    return remove_enemies(board, dead), kills


def remove_tx(board, dead):
    """Remove transmissions; returns (board, count of those not fromScheduled)."""
    dead = dead & board.t_active
    kills = slots.count(dead & ~board.t_from_sched)
    return remove_transmissions(board, dead), kills
