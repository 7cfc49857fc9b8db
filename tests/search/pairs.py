"""Pairs of states a player cannot tell apart, for the fairness tests (specs/search.md §4).

`states()` loads the committed mid-game states (make_states.py). `twin(state,
rng)` returns a second state with the same player's view (`player_view`) but
every hidden field changed where it can be: the seed and step index, every
question block's contents and spawn count, resources under unsiphoned blocks,
hidden cryptogs' cells, hp, stun and disabled turns, every enemy's disabled
turns, the fromScheduled flags, transmissions' enemy types without SHOW, the
order of the enemy and transmission lists; in the live board and in each UNDO
snapshot; and, below the JSON, the stale list slots and history rows, the
ring's start, non-cryptogs' last-known cells and block fields on cells without
a block. `player_view` is written from protocol.md §4 / game-rules.md §12 and
specs/search.md §2.2 independently of the sampler, so that the tests check the
sampler against the rules rather than against itself.
"""

from __future__ import annotations

import copy
import gzip
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from hackmatrix import jax_env
from hackmatrix.jax_env.constants import MAX_OCCUPANTS, NUM_CELLS, UNDO_DEPTH
from hackmatrix.names import ENEMY_TYPES, PROGRAM_NAMES

STATES = Path(__file__).with_name("states.jsonl.gz")
Json = dict[str, Any]


def states() -> list[Json]:
    with gzip.open(STATES, "rt") as f:
        return [json.loads(line)["state"] for line in f]


def _cell(e: Json) -> int:
    return 6 * e["row"] + e["col"]


def _aligned(e: Json, player: Json) -> bool:
    return e["row"] == player["row"] or e["col"] == player["col"]


def _hidden(e: Json, board: Json) -> bool:
    return (
        e["type"] == "cryptog" and not _aligned(e, board["player"]) and not board["showActivated"]
    )


# ----------------------------------------------------------------------------- the view


def board_view(b: Json) -> Json:
    """What a player sees of one board (live or snapshot), plus what they track of it."""
    show = b["showActivated"]
    hidden = sorted((e for e in b["enemies"] if _hidden(e, b)), key=_cell)
    blocks = {}
    for k in b["blocks"]:
        seen = (k["type"], k["siphoned"])
        if k["type"] != "question":
            seen += (k.get("points", 0), k.get("programActionIndex"), k["spawnCount"])
        blocks[_cell(k)] = seen
    siphoned_blocks = {_cell(k) for k in b["blocks"] if k["siphoned"]}
    block_cells = {_cell(k) for k in b["blocks"]}
    resources = {}
    for r in b["resources"]:
        c = _cell(r)
        if c not in block_cells or c in siphoned_blocks:
            resources[c] = (r["credits"], r["energy"], r.get("dataSiphon", False))
        elif r.get("dataSiphon", False):
            resources[c] = (0, 0, True)
    return {
        "player": b["player"],
        "turn": b["turn"],
        "owned": b["ownedPrograms"],
        "show": show,
        "calm": b["scheduledTasksDisabled"],
        "exit": b["exit"],
        "enemies": {
            _cell(e): (e["type"], e["hp"], e["stunned"], e["spawnedFromSiphon"])
            for e in b["enemies"]
            if not _hidden(e, b)
        },
        "hints": [(e["lastKnownRow"], e["lastKnownCol"]) for e in hidden],
        # tracked (specs/search.md §2.2): a visible cryptog's last sighting, a hidden
        # one's siphon origin, the ATK+ uses
        "cryptog_last_known": {
            _cell(e): (e["lastKnownRow"], e["lastKnownCol"])
            for e in b["enemies"]
            if e["type"] == "cryptog" and not _hidden(e, b)
        },
        "hidden_from_siphon": [e["spawnedFromSiphon"] for e in hidden],
        "transmissions": {
            _cell(t): (
                t["turnsRemaining"],
                t["enemyType"] if show else None,
                t["spawnedFromSiphon"],
            )
            for t in b["transmissions"]
        },
        "blocks": blocks,
        "resources": resources,
        "flags": {_cell(f): (f["siphoned"], f["siphonCenter"]) for f in b["cellFlags"]},
        "atk_plus_uses": b["atkPlusUsesThisStage"],
    }


def player_view(s: Json) -> Json:
    return {
        "board": board_view(s),
        "snapshots": [board_view(h) for h in s["undoHistory"]],
        "stage": s["stage"],
        "won": s["gameWon"],
        "tracked": (
            s["scheduledTaskInterval"],
            s["nextScheduledTaskTurn"],
            s["pendingSiphonTransmissions"],
            s["stepActive"],
        ),
    }


# ----------------------------------------------------------------------------- the twin


def _other(rng: random.Random, choices: list, current: Any) -> Any:
    rest = [c for c in choices if c != current]
    return rng.choice(rest) if rest else current


def _twin_board(b: Json, rng: random.Random, snapshot: bool, varied: Counter) -> None:
    p = b["player"]
    block_cells = {_cell(k) for k in b["blocks"]}
    hidden = sorted((e for e in b["enemies"] if _hidden(e, b)), key=_cell)
    if hidden:
        taken = {_cell(e) for e in b["enemies"] if not _hidden(e, b)}
        taken |= {_cell(t) for t in b["transmissions"]} | {_cell(p)}
        free = [
            c
            for c in range(NUM_CELLS)
            if c not in taken and c not in block_cells and c // 6 != p["row"] and c % 6 != p["col"]
        ]
        old = sorted(_cell(e) for e in hidden)
        for _ in range(20):
            cells = sorted(rng.sample(free, len(hidden)))
            if cells != old:
                break
        if cells != old:
            varied["hidden_cryptog_cell"] += 1
        for e, c in zip(hidden, cells):  # sorted to sorted: the hints keep their order
            e["row"], e["col"] = c // 6, c % 6
            e["hp"] = _other(rng, [1, 2], e["hp"])
            varied["hidden_cryptog_hp"] += 1
            if not snapshot:
                e["stunned"] = not e["stunned"]
                varied["hidden_cryptog_stunned"] += 1
    for e in b["enemies"]:
        if not snapshot:
            e["disabledTurns"] = 1 - e["disabledTurns"]
            varied["enemy_disabled_turns"] += 1
            if not e["spawnedFromSiphon"]:
                e["isFromScheduledTask"] = not e["isFromScheduledTask"]
                varied["enemy_from_scheduled"] += 1
    for t in b["transmissions"]:
        if not b["showActivated"]:
            t["enemyType"] = _other(rng, list(ENEMY_TYPES), t["enemyType"])
            varied["transmission_type"] += 1
        if not snapshot and not t["spawnedFromSiphon"]:
            t["isFromScheduledTask"] = not t["isFromScheduledTask"]
            varied["transmission_from_scheduled"] += 1
    if len(b["enemies"]) > 1:
        varied["enemy_order"] += 1
    if len(b["transmissions"]) > 1:
        varied["transmission_order"] += 1
    rng.shuffle(b["enemies"])
    rng.shuffle(b["transmissions"])
    resources = {_cell(r): r for r in b["resources"]}
    for k in b["blocks"]:
        if k["type"] == "question":
            data = rng.random() < 0.5
            k["isData"] = data
            k.pop("points", None)
            k.pop("programType", None)
            k.pop("programActionIndex", None)
            if data:
                k["points"] = rng.randint(1, 9)
            else:
                k["programType"] = rng.choice(PROGRAM_NAMES)
            k["spawnCount"] = _other(rng, list(range(10)), k["spawnCount"])
            varied["question_contents"] += 1
        if not k["siphoned"]:
            c = _cell(k)
            entry = resources.setdefault(
                c, {"row": k["row"], "col": k["col"], "credits": 0, "energy": 0}
            )
            if rng.random() < 0.5:
                entry["credits"], entry["energy"] = _other(rng, [1, 2, 3], entry["credits"]), 0
            else:
                entry["credits"], entry["energy"] = 0, _other(rng, [1, 2, 3], entry["energy"])
            varied["resource_under_block"] += 1
    b["resources"] = sorted(resources.values(), key=_cell)


def twin_json(s: Json, rng: random.Random, varied: Counter) -> Json:
    t = copy.deepcopy(s)
    t["seed"] = _other(rng, list(range(1, 2**32 - 1, 7919)), s["seed"])
    t["stepIndex"] = s["stepIndex"] + rng.randint(1, 1000)
    varied["seed"] += 1
    varied["step_index"] += 1
    _twin_board(t, rng, snapshot=False, varied=varied)
    for h in t["undoHistory"]:
        _twin_board(h, rng, snapshot=True, varied=varied)
        varied["snapshot"] += 1
    return t


def _below_json(state: Any, rng: np.random.Generator, varied: Counter) -> Any:
    """Change what the JSON does not carry: stale slots and rows, the ring's start,
    non-cryptogs' last-known cells, block fields on cells without a block."""
    b = state.board
    n = MAX_OCCUPANTS

    def junk(active, x, hi):
        noise = jnp.asarray(rng.integers(0, hi, n), x.dtype)
        return jnp.where(active, x, noise)

    from hackmatrix.jax_env.constants import BLOCK, CRYPTOG

    non_cryptog = b.e_active & (b.e_type != CRYPTOG)
    updates = {
        "e_last_known": jnp.where(
            non_cryptog, jnp.asarray(rng.integers(0, NUM_CELLS, n), jnp.int32), b.e_last_known
        )
    }
    for f, hi in (("e_type", 4), ("e_pos", NUM_CELLS), ("e_hp", 4), ("e_last_known", NUM_CELLS)):
        updates[f] = junk(b.e_active, updates.get(f, getattr(b, f)), hi)
    for f, hi in (("t_pos", NUM_CELLS), ("t_countdown", 5), ("t_type", 4)):
        updates[f] = junk(b.t_active, getattr(b, f), hi)
    no_block = b.content != BLOCK
    for f, hi in (("block_kind", 3), ("points", 10), ("program", 23), ("spawn_count", 10)):
        noise = jnp.asarray(rng.integers(0, hi, NUM_CELLS), jnp.int32)
        updates[f] = jnp.where(no_block, noise, getattr(b, f))
    varied["below_json"] += 1
    board = b.replace(**updates)
    count = int(state.history_count)
    rows = np.asarray(state.history).copy()
    rows[count:] = rng.integers(-5, 50, rows[count:].shape)
    shift = int(rng.integers(0, UNDO_DEPTH))
    rows = np.roll(rows, shift, axis=0)  # oldest now at slot `shift`
    return state.replace(
        board=board,
        history=jnp.asarray(rows, jnp.int32),
        history_start=jnp.asarray(shift, jnp.int32),
    )


def twin(s: Json, seed: int, varied: Counter) -> tuple[Json, Any]:
    """(the twin's JSON, the twin as an EnvState with the below-JSON changes)."""
    rng = random.Random(seed)
    t = twin_json(s, rng, varied)
    state = jax_env.state_from_json(t)
    return t, _below_json(state, np.random.default_rng(seed), varied)


def stack(states: list[Any]) -> Any:
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)
