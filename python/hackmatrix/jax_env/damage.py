"""Shared removal helpers: damage + stun + removeDead (game-rules.md §5, §7), transmissions."""

import jax
import jax.numpy as jnp

from .board import remove_enemies, remove_transmissions
from .machinery import slots
from .state import Board


def apply_damage(
    board: Board, damage: jax.Array, stun: bool, kill: jax.Array | None = None
) -> tuple[Board, jax.Array]:
    """Every enemy takes damage[i]; hit survivors are stunned if `stun`; `kill` removes outright.

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


def remove_tx(board: Board, dead: jax.Array) -> tuple[Board, jax.Array]:
    """Remove transmissions; returns (board, count of those not fromScheduled)."""
    dead = dead & board.t_active
    kills = slots.count(dead & ~board.t_from_sched)
    return remove_transmissions(board, dead), kills
