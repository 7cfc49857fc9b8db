"""One step (game-rules.md §4): a chain of phases, each mirroring a section of the rules."""

import jax
import jax.numpy as jnp

from . import slots
from .actions import directional, siphon
from .batching import select_rare, where_needed, where_needed_reading
from .constants import (
    DIED,
    LAST_STAGE,
    MAX_HP,
    NUM_ACTIONS,
    PROGRAM_CREDITS,
    PROGRAM_ENERGY,
    REWARD_COMPONENT_NAMES,
    RUNNING,
    WAIT,
    WON,
)
from .enemy_phase import enemy_phase
from .generation import generate_stage
from .history import push as push_snapshot
from .mask import action_mask
from .programs import run_program
from .rewards import exit_distance, reward_components, siphon_quality


def _select(pred, a, b):
    return jax.tree_util.tree_map(lambda x, y: jnp.where(pred, x, y), a, b)


def _pay(state, p):
    """§7.1: a program's credits and energy."""
    board = state.board
    return state.replace(
        board=board.replace(
            credits=board.credits - jnp.asarray(PROGRAM_CREDITS)[p],
            energy=board.energy - jnp.asarray(PROGRAM_ENERGY)[p],
        )
    )


def _special_action(x, history):
    """The siphon (§6) or program p (§7) for one env, with the siphon's quality (rewards.md §6)."""
    state, p, is_siphon, _, _ = x
    sip_state, _ = siphon(state)
    quality = siphon_quality(state.board)
    prog_state, prog_ev = run_program(_pay(state, p), p, history)
    state = _select(is_siphon, sip_state, prog_state)
    prog_ev = {k: jnp.where(is_siphon, jnp.zeros_like(v), v) for k, v in prog_ev.items()}
    quality = tuple(jnp.where(is_siphon, q, jnp.zeros_like(q)) for q in quality)
    return state, p, is_siphon, prog_ev, quality


# The siphon and the programs are the costlier actions and most steps use
# neither: under vmap they run only for the envs whose action needs them, in
# one gathered group, so the directional envs pay nothing for them.
_special_where = where_needed_reading(_special_action)


def player_action(state, action, history):
    """§5 / §6 / §7: run the action itself (UNDO reads `history`). Returns (state, ev, ends_turn, siphon quality)."""
    is_dir, is_siphon, is_program = action < 4, action == 4, action >= 5
    dir_state, dir_ev = directional(state, jnp.clip(action, 0, 3))
    state = _select(is_dir, dir_state, state)
    zero = jnp.asarray(0, jnp.int32)
    p = jnp.clip(action - 5, 0, 22)
    no_ev = dict(enemies_killed=zero, transmissions_killed=zero, exit_reached=jnp.asarray(False))
    no_quality = (jnp.asarray(False), zero, zero)
    new, _, _, prog_ev, quality = _special_where(
        is_siphon | is_program, (state, p, is_siphon, no_ev, no_quality), history
    )
    ev = {
        "enemies_killed": jnp.where(
            is_dir, dir_ev["enemies_killed"], jnp.where(is_siphon, zero, prog_ev["enemies_killed"])
        ),
        "transmissions_killed": jnp.where(
            is_dir,
            dir_ev["transmissions_killed"],
            jnp.where(is_siphon, zero, prog_ev["transmissions_killed"]),
        ),
        "data_siphon_collected": is_dir & dir_ev["data_siphon_collected"],
        "exit_reached": jnp.where(
            is_dir, dir_ev["exit_reached"], ~is_siphon & prog_ev["exit_reached"]
        ),
        "siphon_used": is_siphon,
    }
    ends_turn = jnp.where(is_dir, ~dir_ev["exit_reached"], is_siphon | (p == WAIT))
    return new, ev, ends_turn, quality


_generate_where = where_needed(generate_stage)


def complete_stage(state, exit_reached):
    """§10.6 when the exit was reached: +1 hp, then the next stage (generated) or victory."""
    last = state.stage >= LAST_STAGE
    completed = state.replace(
        board=state.board.replace(hp=jnp.minimum(MAX_HP, state.board.hp + 1)),
        stage=jnp.where(last, state.stage, state.stage + 1),
        interval=jnp.where(last, state.interval, 13 - (state.stage + 1)),
        outcome=jnp.where(last, WON, state.outcome),
    )
    state = _select(exit_reached, completed, state)
    return _generate_where(exit_reached & ~last, state)


def end_check(state):
    """§4 end / §11: dead after the enemy phase, or trapped with no legal action."""
    running = state.outcome == RUNNING
    dead = running & ((state.board.hp == 0) | ~jnp.any(action_mask(state)))
    return state.replace(
        outcome=jnp.where(dead, DIED, state.outcome),
        board=state.board.replace(hp=jnp.where(dead, 0, state.board.hp)),
    )


def _siphon_death(state):
    b = state.board
    pr, pc = b.player_pos // 6, b.player_pos % 6
    adjacent = (jnp.abs(b.e_pos // 6 - pr) + jnp.abs(b.e_pos % 6 - pc)) == 1
    return slots.any_true(b.e_active & adjacent & b.e_from_siphon)


def _execute(state, action, history):
    """An accepted action: the full step of §4 plus the facts the reward needs.

    `state` comes without its history (None), which only UNDO reads; returns
    the snapshot to push (§8.9) and whether to push it.
    """
    before = state.board
    dist_before = exit_distance(before, state.exit_pos)
    stage_before = state.stage

    state, ev, ends_turn, (found, missed_cr, missed_en) = player_action(state, action, history)
    exit_reached = ev["exit_reached"]
    state = complete_stage(state, exit_reached)
    state, push = enemy_phase(state, ~exit_reached & ends_turn)
    snapshot = state.board  # §8.9: the board at the end of the enemy phase
    state = end_check(state)
    after = state.board
    died = state.outcome == DIED
    facts = dict(
        died=died,
        won=state.outcome == WON,
        exit_reached=exit_reached,
        dist_before=dist_before,
        dist_after=exit_distance(after, state.exit_pos),
        stage_before=stage_before,
        stage_after=state.stage,
        hp_before=before.hp,
        hp_after=after.hp,
        score_before=before.score,
        score_after=after.score,
        credits_before=before.credits,
        credits_after=after.credits,
        energy_before=before.energy,
        energy_after=after.energy,
        kills=ev["enemies_killed"] + ev["transmissions_killed"],
        data_siphon_collected=ev["data_siphon_collected"],
        siphon_found=ev["siphon_used"] & found,
        missed_credits=missed_cr,
        missed_energy=missed_en,
        reset_at_two=(action == 19) & (before.hp == 2),
        siphon_death=died & _siphon_death(state),
    )
    state = state.replace(step_index=state.step_index + jnp.uint32(1))
    comps, total = reward_components(facts)
    return state, comps, total, (snapshot, push)


def step_state(state, action):
    """Pure step without observation: (state, reward, done, info)."""
    action = jnp.asarray(action, jnp.int32)
    in_range = (action >= 0) & (action < NUM_ACTIONS)
    valid = in_range & action_mask(state)[jnp.clip(action, 0, NUM_ACTIONS - 1)]
    # The step runs without the history: selects and gathers then never copy it.
    core = state.replace(history=None)
    new_core, comps, total, (snapshot, push) = _execute(
        core, jnp.clip(action, 0, NUM_ACTIONS - 1), state.history
    )
    core = select_rare(~valid, core, new_core)  # a rejected action changes nothing
    history, count, start = push_snapshot(
        state.history, core.history_count, core.history_start, snapshot, valid & push
    )
    state = core.replace(history=history, history_count=count, history_start=start)
    comps = {k: jnp.where(valid, v, jnp.float32(0.0)) for k, v in comps.items()}
    reward = jnp.where(valid, total, jnp.float32(0.0))
    done = valid & (state.outcome != RUNNING)
    info = {
        "reward_components": {k: comps[k] for k in REWARD_COMPONENT_NAMES},
        "invalid_action": ~valid,
        "stage": state.stage,
        "score": state.board.score,
        "hp": state.board.hp,
        "won": state.outcome == WON,
        "died": state.outcome == DIED,
    }
    return state, reward, done, info
