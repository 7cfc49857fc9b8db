"""Build tests/search/states.jsonl.gz: mid-game states for the search's tests.

    PYTHONPATH=python python tests/search/make_states.py

Random games (uniform over the valid actions, UNDO rarer so histories fill)
are played on the JAX engine and states are kept from the middle of them,
preferring ones with question blocks, hidden cryptogs and transmissions; some
are then enriched through their JSON (protocol.md §6) so that every hidden
element the sampler handles appears several times, in the live board and in
the UNDO snapshots: hidden cryptogs, transmissions in flight, pending siphon
transmissions under STEP, SHOW, question blocks after a REDUC. The file is
committed so that the tests replay no games (CI compiles only the search);
rerun this script only to change the set.
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from hackmatrix import jax_env
from hackmatrix.jax_env.step import step_state
from hackmatrix.names import ENEMY_TYPES

OUT = Path(__file__).with_name("states.jsonl.gz")
GAMES, STEPS, PICK_EVERY = 64, 48, 8
UNDO = 14


def _cell(e):
    return 6 * e["row"] + e["col"]


def _occupied(board):
    cells = {_cell(e) for e in board["enemies"]} | {_cell(t) for t in board["transmissions"]}
    return cells | {_cell(board["player"])}


def _blocks(board):
    return {_cell(b) for b in board["blocks"]}


def _hidden_cells_free(board):
    """Free cells out of the player's row and column, with no block: where a cryptog hides."""
    p = board["player"]
    taken, blocks = _occupied(board), _blocks(board)
    return [
        c
        for c in range(36)
        if c not in taken and c not in blocks and c // 6 != p["row"] and c % 6 != p["col"]
    ]


def add_hidden_cryptog(board, rng):
    free = _hidden_cells_free(board)
    if not free:
        return False
    c = rng.choice(free)
    hint = rng.randrange(36)
    board["enemies"].append(
        {
            "type": "cryptog",
            "row": c // 6,
            "col": c % 6,
            "hp": rng.choice([1, 2]),
            "stunned": False,
            "spawnedFromSiphon": False,
            "isFromScheduledTask": False,
            "disabledTurns": 0,
            "lastKnownRow": hint // 6,
            "lastKnownCol": hint % 6,
        }
    )
    return True


def add_transmission(board, rng, snapshot):
    taken, blocks = _occupied(board), _blocks(board)
    free = [c for c in range(36) if c not in taken and c not in blocks]
    if not free:
        return False
    c = rng.choice(free)
    board["transmissions"].append(
        {
            "row": c // 6,
            "col": c % 6,
            "turnsRemaining": rng.randint(1, 4),
            "enemyType": rng.choice(ENEMY_TYPES),
            "isFromScheduledTask": False,
            "spawnedFromSiphon": (not snapshot) and rng.random() < 0.5,
        }
    )
    return True


def to_question(board, cells):
    """Blocks on `cells` that are unsiphoned become question blocks hiding what they held."""
    for b in board["blocks"]:
        if _cell(b) in cells and not b["siphoned"] and b["type"] != "question":
            b["isData"] = b["type"] == "data"
            b["type"] = "question"


def reduc(board):
    """One REDUC on the board: every unsiphoned block's spawn count down by one."""
    for b in board["blocks"]:
        if not b["siphoned"]:
            b["spawnCount"] = max(0, b["spawnCount"] - 1)


def enrich(state, rng, kind):
    boards = [state, *state["undoHistory"]]
    if kind == "cryptog":
        for k, board in enumerate(boards):
            if k == 0 or rng.random() < 0.7:
                add_hidden_cryptog(board, rng)
    elif kind == "transmissions":
        for k, board in enumerate(boards):
            for _ in range(rng.randint(1, 3)):
                add_transmission(board, rng, snapshot=k > 0)
    elif kind == "pending":
        state["pendingSiphonTransmissions"] = rng.randint(1, 9)
        state["stepActive"] = True
        add_transmission(state, rng, snapshot=False)
    elif kind == "show":
        state["showActivated"] = True
        add_transmission(state, rng, snapshot=False)
        add_hidden_cryptog(state, rng)  # visible now: SHOW is on
    elif kind == "question":
        cells = {_cell(b) for b in state["blocks"] if not b["siphoned"]}
        chosen = set(rng.sample(sorted(cells), min(len(cells), 3))) if cells else set()
        for board in boards:
            to_question(board, chosen)
        if rng.random() < 0.5:
            reduc(state)
        add_hidden_cryptog(state, rng)
    return kind


def play(seed: int) -> list[dict]:
    key = jax.random.PRNGKey(seed)
    reset = jax.jit(jax.vmap(jax_env.reset, in_axes=(0, None)))
    keys = jax.random.split(key, GAMES)
    # Half the games start on stages 2..7 with programs and resources (curriculum
    # starts, training.md §1.7), so that programs (UNDO, REDUC, SHOW, ...) get used.
    later = jax_env.curriculum_params(
        stage_weights=[0, 1, 1, 1, 1, 1, 1, 0],
        programs=(3, 10),
        credits=(5, 20),
        energy=(5, 20),
        data_siphons=(1, 3),
    )
    _, first = reset(keys[: GAMES // 2], jax_env.EnvParams())
    _, second = reset(keys[GAMES // 2 :], later)
    states = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b]), first, second)
    step = jax.jit(jax.vmap(step_state))
    kept = []
    rng = np.random.default_rng(seed)
    for t in range(STEPS):
        mask = np.asarray(jax.vmap(jax_env.action_mask)(states))
        weights = mask * 1.0
        weights[:, UNDO] *= 0.1
        actions = np.array(
            [rng.choice(28, p=w / w.sum()) if w.sum() > 0 else 0 for w in weights], np.int32
        )
        states, _, done, _ = step(states, jnp.asarray(actions))
        if t % PICK_EVERY == PICK_EVERY - 1:
            for i in range(GAMES):
                one = jax.tree_util.tree_map(lambda x, i=i: x[i], states)
                if int(one.outcome) == 0:
                    kept.append(jax_env.state_to_json(one))
    return kept


def score(state):
    hidden = sum(
        1
        for e in state["enemies"]
        if e["type"] == "cryptog"
        and e["row"] != state["player"]["row"]
        and e["col"] != state["player"]["col"]
    )
    question = sum(1 for b in state["blocks"] if b["type"] == "question")
    return (
        (hidden > 0)
        + (question > 0)
        + (len(state["transmissions"]) > 0)
        + (len(state["undoHistory"]) >= 2)
    )


def main() -> int:
    rng = random.Random(49)
    pool = play(49)
    pool.sort(key=lambda s: (score(s), s["stage"] > 1, len(s["ownedPrograms"])), reverse=True)
    natural = pool[:12]
    rest = pool[12:]
    rng.shuffle(rest)
    kinds = ["cryptog", "transmissions", "pending", "show", "question"] * 4
    out = [{"kind": "natural", "state": s} for s in natural]
    for kind, state in zip(kinds, rest):
        state = json.loads(json.dumps(state))
        enrich(state, rng, kind)
        jax_env.state_from_json(state)  # still a valid state
        out.append({"kind": kind, "state": state})
    with gzip.open(OUT, "wt") as f:
        for entry in out:
            f.write(json.dumps(entry, separators=(",", ":")) + "\n")
    print(f"{len(out)} states -> {OUT} ({OUT.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
