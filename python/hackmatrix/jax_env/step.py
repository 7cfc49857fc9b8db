"""One step (game-rules.md §4): a chain of phases, each mirroring a section of the rules.

Mirrors swift/Sources/HackMatrixCore/Step.swift.
"""

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp

from .actions import directional, siphon
from .constants import (
    DIED,
    FIRST_PROGRAM_ACTION,
    LAST_STAGE,
    MAX_HP,
    NUM_ACTIONS,
    NUM_PROGRAMS,
    PROGRAM_CREDITS,
    PROGRAM_ENERGY,
    RESET,
    REWARD_COMPONENT_NAMES,
    RUNNING,
    SIPHON_ACTION,
    WAIT,
    WON,
)
from .enemy_phase import enemy_phase
from .events import ActionEvents, StepEvents
from .generation import generate_stage
from .grid import manhattan
from .machinery import form, slots
from .machinery.batching import select_rare, where_needed
from .machinery.trees import select
from .mask import action_mask
from .programs import run_program
from .rewards import SiphonQuality, reward_baseline, reward_components, siphon_quality
from .state import Board, EnvState
from .undo import push as push_snapshot

RESET_ACTION = FIRST_PROGRAM_ACTION + RESET  # rewards.md §4.14 watches RESET


def _pay(state: EnvState, p: jax.Array) -> EnvState:
    """§7.1: a program's credits and energy."""
    board = state.board
    return state.replace(
        board=board.replace(
            credits=board.credits - jnp.asarray(PROGRAM_CREDITS)[p],
            energy=board.energy - jnp.asarray(PROGRAM_ENERGY)[p],
        )
    )


def _special_action(
    state: EnvState, p: jax.Array, is_siphon: jax.Array, history: jax.Array
) -> tuple[EnvState, tuple[ActionEvents, SiphonQuality]]:
    """The siphon (§6) or program p (§7) for one env, with the siphon's quality (rewards.md §6)."""
    quality = siphon_quality(state.board)
    prog_state, prog_ev = run_program(_pay(state, p), p, history)
    state = select(is_siphon, siphon(state), prog_state)
    prog_ev = select(is_siphon, ActionEvents.none(), prog_ev)
    quality = select(is_siphon, quality, SiphonQuality.none())
    return state, (prog_ev, quality)


# The siphon and the programs are the costlier actions and most steps use
# neither: under vmap they run only for the envs whose action needs them, in
# one gathered group, so the directional envs pay nothing for them.
_special_where = where_needed(_special_action)


def player_action(
    state: EnvState, action: jax.Array, history: jax.Array
) -> tuple[EnvState, StepEvents, jax.Array, SiphonQuality]:
    """§5 / §6 / §7: run the action itself (UNDO reads `history`).

    Returns (state, events so far, whether the action ends the turn, the siphon's quality).
    """
    is_dir = action < SIPHON_ACTION
    is_siphon = action == SIPHON_ACTION
    is_program = action >= FIRST_PROGRAM_ACTION
    dir_state, dir_ev = directional(state, jnp.clip(action, 0, SIPHON_ACTION - 1))
    state = select(is_dir, dir_state, state)
    p = jnp.clip(action - FIRST_PROGRAM_ACTION, 0, NUM_PROGRAMS - 1)
    new, (prog_ev, quality) = _special_where(
        is_siphon | is_program,
        state,
        (p, is_siphon, history),
        default=(ActionEvents.none(), SiphonQuality.none()),
    )
    ev = select(is_dir, dir_ev, prog_ev)  # a siphon's are none
    events = StepEvents(
        exit_reached=ev.exit_reached,
        game_won=jnp.asarray(False),
        player_died=jnp.asarray(False),
        enemies_killed=ev.enemies_killed,
        transmissions_killed=ev.transmissions_killed,
        data_siphon_collected=is_dir & ev.data_siphon_collected,
        siphon_used=is_siphon,
        reset_at_two=jnp.asarray(False),
        died_to_siphon_enemy=jnp.asarray(False),
    )
    ends_turn = jnp.where(is_dir, ~dir_ev.exit_reached, is_siphon | (p == WAIT))
    return new, events, ends_turn, quality


_generate_where = where_needed(generate_stage)


def complete_stage(state: EnvState, exit_reached: jax.Array) -> EnvState:
    """§10.6 when the exit was reached: +1 hp, then the next stage (generated) or victory."""
    last = state.stage >= LAST_STAGE
    completed = state.replace(
        board=state.board.replace(hp=jnp.minimum(MAX_HP, state.board.hp + 1)),
        stage=jnp.where(last, state.stage, state.stage + 1),
        interval=jnp.where(last, state.interval, 13 - (state.stage + 1)),
        outcome=jnp.where(last, WON, state.outcome),
    )
    state = select(exit_reached, completed, state)
    return _generate_where(exit_reached & ~last, state)


def end_check(state: EnvState) -> EnvState:
    """§4 end / §11: dead after the enemy phase, or trapped with no legal action."""
    running = state.outcome == RUNNING
    dead = running & ((state.board.hp == 0) | ~jnp.any(action_mask(state)))
    return state.replace(
        outcome=jnp.where(dead, DIED, state.outcome),
        board=state.board.replace(hp=jnp.where(dead, 0, state.board.hp)),
    )


def _next_to_siphon_enemy(state: EnvState) -> jax.Array:
    """An enemy spawned by a siphon stands next to the player (rewards.md §4.15)."""
    b = state.board
    adjacent = manhattan(b.e_pos, b.player_pos) == 1
    return slots.any_true(b.e_active & adjacent & b.e_from_siphon)


def _execute(
    state: EnvState, action: jax.Array, history: jax.Array
) -> tuple[EnvState, dict[str, jax.Array], jax.Array, Board, jax.Array, jax.Array]:
    """An accepted action: the full step of §4 plus its reward.

    `state` comes without its history (None), which only UNDO reads; returns
    (state, components, reward, the snapshot to push (§8.9), whether to push it, the
    signed exit-distance change).
    """
    state_before = state
    state, ev, ends_turn, quality = player_action(state, action, history)
    before = reward_baseline(state_before, quality)
    state = complete_stage(state, ev.exit_reached)
    state, push = enemy_phase(state, ~ev.exit_reached & ends_turn)
    snapshot = state.board  # §8.9: the board at the end of the enemy phase
    state = end_check(state)
    died = state.outcome == DIED
    ev = ev._replace(
        game_won=state.outcome == WON,
        player_died=died,
        reset_at_two=(action == RESET_ACTION) & (before.hp == 2),
        died_to_siphon_enemy=died & _next_to_siphon_enemy(state),
    )
    comps, total, distance_delta = reward_components(before, state, ev)
    state = state.replace(step_index=state.step_index + jnp.uint32(1))
    return state, comps, total, snapshot, push, distance_delta


def step_state(
    state: EnvState, action: jax.Array | int
) -> tuple[EnvState, jax.Array, jax.Array, dict[str, Any]]:
    """Pure step without observation: (state, reward, done, info), in the current form."""
    return _step_state(state, action, form.current())


# Jitted so a process traces the step once per form (machinery/form.py): every trainer,
# evaluation and test program that calls it reuses that trace (XLA inlines the call;
# results are unchanged).
@partial(jax.jit, static_argnames="step_form")
def _step_state(
    state: EnvState, action: jax.Array | int, step_form: str
) -> tuple[EnvState, jax.Array, jax.Array, dict[str, Any]]:
    with form.using(step_form):
        return _step_body(state, action)


def _step_body(
    state: EnvState, action: jax.Array | int
) -> tuple[EnvState, jax.Array, jax.Array, dict[str, Any]]:
    action = jnp.asarray(action, jnp.int32)
    board_before = state.board
    in_range = (action >= 0) & (action < NUM_ACTIONS)
    valid = in_range & action_mask(state)[jnp.clip(action, 0, NUM_ACTIONS - 1)]
    # The step runs without the history: selects and gathers then never copy it.
    core = state.replace(history=None)
    new_core, comps, total, snapshot, push, distance_delta = _execute(
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
        # The signed cells gained toward the exit that `distance_shaping` pays for when
        # positive (rewards.md §4.6; 0 on death, the whole distance on the exit step):
        # for trainers that shape symmetrically (training.md §1.1).
        "exit_distance_delta": jnp.where(valid, distance_delta, 0),
        # What the step changed in hand, for trainer-side shaping (training.md §1.1): per
        # program +1 taken, -1 given back (UNDO); data siphons held after minus before.
        "programs_gained": state.board.owned.astype(jnp.int32)
        - board_before.owned.astype(jnp.int32),
        "data_siphons_gained": state.board.data_siphons - board_before.data_siphons,
    }
    return state, reward, done, info
