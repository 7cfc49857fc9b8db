"""What one step of a game says about the policy, counted per game (training.md §9.2).

`step_facts` reads one step of the JAX engine (its `EnvState` before and after, the
mask, the action, the reward components) into per-game counters: how the game ended,
the siphons and what they drained, the program funnel (held, affordable, runnable,
run), RESET by hp, and what the player brings into each stage. `Facts` is the watcher
(`play.Watcher`) that sums them over the steps each game is still being played.
Everything here is HackMatrix-specific: death causes and siphon yields are read from
the engine's state.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..names import (
    FIRST_PROGRAM_ACTION,
    LAST_STAGE,
    NUM_PROGRAMS,
    PROGRAM_COSTS,
    SIPHON_ACTION,
    Program,
)
from .play import Step

RESET_ACTION = FIRST_PROGRAM_ACTION + Program.RESET
MAX_HP = 3  # the player's (game-rules.md §1)
NUM_STAGES = LAST_STAGE
# How each game ended (`end` code = index).
ENDS = ("won", "died_enemy", "died_siphon_enemy", "died_other", "unfinished")
WON, DIED_ENEMY, DIED_SIPHON_ENEMY, DIED_OTHER, UNFINISHED = range(len(ENDS))
# Reward constants that turn a component back into the count behind it (rewards.md §1).
SIPHON_QUALITY_PER_RESOURCE = 0.5 * 0.05
KILL_REWARD = 0.3
PROGRAM_CREDITS = np.array([credits for credits, _ in PROGRAM_COSTS], np.int32)
PROGRAM_ENERGY = np.array([energy for _, energy in PROGRAM_COSTS], np.int32)
BLOCK_CONTENT = 1  # a cell's `content` code for BLOCK (game-rules.md §1.3; jax_env.constants)


def _enemy_adjacent(board) -> jnp.ndarray:
    player_row, player_col = board.player_pos // 6, board.player_pos % 6
    distance = jnp.abs(board.e_pos // 6 - player_row) + jnp.abs(board.e_pos % 6 - player_col)
    return jnp.any(board.e_active & (distance == 1))


def _end(next_state: Any, done: jax.Array, info: dict) -> jax.Array:
    """The `ENDS` code of the step: won, a death by its cause, or still unfinished."""
    died = done & info["died"]
    cause = jnp.where(
        info["reward_components"]["siphon_death_penalty"] < 0,
        DIED_SIPHON_ENEMY,
        jnp.where(_enemy_adjacent(next_state.board), DIED_ENEMY, DIED_OTHER),
    )
    return jnp.where(done & info["won"], WON, jnp.where(died, cause, UNFINISHED)).astype(jnp.int32)


def _siphon_facts(state: Any, action: jax.Array, next_state: Any, done, info: dict) -> dict:
    """A siphon's counters (zero on other steps): what it gained and what it drained (game-
    rules.md §6): the blocks of its cross by what they bear, the transmissions they queue,
    and the unsiphoned blocks left anywhere on the board."""
    comps = info["reward_components"]
    before, after = state.board, next_state.board
    is_siphon = action == SIPHON_ACTION
    gained_programs = jnp.sum(after.owned) - jnp.sum(before.owned)
    gained_anything = (
        (after.score != before.score)
        | (after.credits != before.credits)
        | (after.energy != before.energy)
        | (gained_programs != 0)
    )
    unsiphoned_blocks = (before.content == BLOCK_CONTENT) & ~before.siphoned
    drained = is_siphon & unsiphoned_blocks & after.siphoned
    died = done & info["died"]
    on_siphon = lambda value: jnp.where(is_siphon, value, 0).astype(jnp.int32)  # noqa: E731
    return {
        "siphons": is_siphon.astype(jnp.int32),
        "siphons_suboptimal": (is_siphon & (comps["siphon_quality"] < 0)).astype(jnp.int32),
        "siphon_missed_resources": jnp.round(
            -comps["siphon_quality"] / SIPHON_QUALITY_PER_RESOURCE
        ).astype(jnp.int32),
        "siphons_empty": (is_siphon & ~gained_anything).astype(jnp.int32),
        "siphon_points": on_siphon(after.score - before.score),
        "siphon_programs": on_siphon(gained_programs),
        "siphon_data_blocks": jnp.sum(drained & before.hidden_is_data).astype(jnp.int32),
        "siphon_program_blocks": jnp.sum(drained & ~before.hidden_is_data).astype(jnp.int32),
        "siphon_transmissions": jnp.sum(jnp.where(drained, before.spawn_count, 0)).astype(
            jnp.int32
        ),
        "siphon_resources": on_siphon(
            after.credits - before.credits + after.energy - before.energy
        ),
        "siphon_blocks_on_board": on_siphon(jnp.sum(unsiphoned_blocks)),
        "siphon_programs_at_death": jnp.where(is_siphon & died, gained_programs, 0).astype(
            jnp.int32
        ),
    }


def _program_facts(state: Any, mask: jax.Array, action: jax.Array) -> dict:
    """The program funnel (§9.2): held -> affordable -> runnable (the mask) -> run; and
    RESET by the hp it was run at."""
    before = state.board
    held = before.owned
    affordable = (
        held
        & (before.credits >= jnp.asarray(PROGRAM_CREDITS))
        & (before.energy >= jnp.asarray(PROGRAM_ENERGY))
    )
    runnable = mask[FIRST_PROGRAM_ACTION:]
    is_program = action >= FIRST_PROGRAM_ACTION
    return {
        "program_uses": (
            is_program & (jnp.arange(NUM_PROGRAMS) == action - FIRST_PROGRAM_ACTION)
        ).astype(jnp.int32),
        "program_held_steps": held.astype(jnp.int32),
        "program_affordable_steps": affordable.astype(jnp.int32),
        "program_runnable_steps": runnable.astype(jnp.int32),
        "steps_holding_a_program": jnp.any(held).astype(jnp.int32),
        "steps_a_program_runs": jnp.any(runnable).astype(jnp.int32),
        "resets_by_hp": ((action == RESET_ACTION) & (jnp.arange(MAX_HP + 1) == before.hp)).astype(
            jnp.int32
        ),
    }


def step_facts(
    state: Any,
    mask: jax.Array,
    action: jax.Array,
    next_state: Any,
    reward: jax.Array,
    done: jax.Array,
    info: dict,
) -> dict:
    """Per-game counters of one step (unbatched); see training.md §9.2 for their meaning.

    `mask` is the action mask the policy chose from (bool[28]).
    """
    comps = info["reward_components"]
    return {
        "return": reward.astype(jnp.float32),
        "length": jnp.int32(1),
        "end": _end(next_state, done, info),
        **_siphon_facts(state, action, next_state, done, info),
        "pickups": (comps["data_siphon"] > 0).astype(jnp.int32),
        "kills": jnp.round(comps["kills"] / KILL_REWARD).astype(jnp.int32),
        "invalid_actions": info["invalid_action"].astype(jnp.int32),
        **_program_facts(state, mask, action),
        "steps_on_stage": _on_stage(state).astype(jnp.int32),
        **stage_entry_facts(next_state, next_state.stage > state.stage),
    }


def _on_stage(state: Any) -> jax.Array:
    """bool[NUM_STAGES]: true at the stage `state` is on."""
    return jnp.arange(1, NUM_STAGES + 1) == state.stage


def stage_entry_facts(state: Any, entered: jax.Array) -> dict[str, jax.Array]:
    """What the player brings into the stage `state` is on, if `entered` (else zeros): hp,
    enemies and transmissions carry over from stage to stage (game-rules.md §10), so falling
    hp or a growing crowd on entering says whether the later stages are lost by attrition."""
    on = _on_stage(state) & entered
    return {
        "stage_entries": on.astype(jnp.int32),
        "hp_on_entering": jnp.where(on, state.board.hp, 0).astype(jnp.int32),
        "enemies_on_entering": jnp.where(on, jnp.sum(state.board.e_active), 0).astype(jnp.int32),
        "transmissions_on_entering": jnp.where(on, jnp.sum(state.board.t_active), 0).astype(
            jnp.int32
        ),
    }


@dataclass(frozen=True)
class Facts:
    """The watcher of the behaviour evaluation: each game's `step_facts` summed over the
    steps it is still being played (`end`: how it ended, UNFINISHED until it does), with
    the stage it starts on counted as entered. A step's record is what it added."""

    def start(self, env: ModuleType, env_params: Any, obs: jax.Array, state: Any) -> dict:
        batch = obs.shape[0]

        def facts_of_a_step(state, action):
            mask = jax.vmap(env.action_mask)(state)
            keys = jnp.zeros((batch, 2), jnp.uint32)
            next_obs, next_state, reward, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                keys, state, action, env_params
            )
            return jax.vmap(step_facts)(state, mask, action, next_state, reward, done, info)

        shapes = jax.eval_shape(facts_of_a_step, state, jnp.zeros(batch, jnp.int32))
        totals = {k: jnp.zeros(v.shape, v.dtype) for k, v in shapes.items()}
        totals["end"] = jnp.full(batch, UNFINISHED, jnp.int32)
        totals.update(jax.vmap(stage_entry_facts)(state, jnp.ones(batch, bool)))  # the start
        return totals

    def add(self, env: ModuleType, totals: dict, step: Step) -> tuple[dict, dict]:
        facts = jax.vmap(step_facts)(
            step.state, step.mask, step.action, step.next_state, step.reward, step.done, step.info
        )
        live, added, out = step.live, {}, {}
        for name, value in facts.items():
            gate = live.reshape(live.shape + (1,) * (value.ndim - 1))
            if name == "end":
                added[name] = jnp.where(live, value, UNFINISHED)
                out[name] = jnp.where(live, value, totals[name])
            else:
                added[name] = jnp.where(gate, value, jnp.zeros_like(value))
                out[name] = totals[name] + added[name]
        return out, added


FACTS = Facts()
