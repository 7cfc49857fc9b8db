"""Shared jitted engine functions (compiled once per test session) and scenario builders."""

import copy
import functools

import jax
import numpy as np

import hackmatrix.jax_env as J

STEP = jax.jit(J.step)
MASK = jax.jit(J.action_mask)
OBSERVE = jax.jit(J.observe)
RESET_FROM_SEED = jax.jit(J.reset_from_seed)


def state(player=None, **fields):
    """A setState dict for the default state of game-rules.md §16, with overrides."""
    d = {"player": {"row": 0, "col": 0}}
    if player:
        d["player"].update(player)
    d.update(fields)
    return d


def run(start, actions):
    """Apply actions to a setState dict; returns a list of (json, reward, done, info) after each."""
    s = J.state_from_json(copy.deepcopy(start))
    out = []
    for a in actions:
        _, s, reward, done, info = STEP(None, s, a)
        out.append(
            (
                J.state_to_json(s),
                float(reward),
                bool(done),
                jax.tree_util.tree_map(np.asarray, info),
            )
        )
    return out


def last(start, actions):
    return run(start, actions)[-1]


def final_json(start, actions):
    return run(start, actions)[-1][0]


def pos(entity):
    return (entity["row"], entity["col"])


def positions(entities):
    return [pos(e) for e in entities]


@functools.cache
def reset_json(seed):
    _, s = RESET_FROM_SEED(seed)
    return J.state_to_json(s)


def mask_of(d):
    return np.asarray(MASK(J.state_from_json(copy.deepcopy(d))))


def board_table(d):
    """The §16 board notation (row 5 first) of a state JSON, for comparing whole boards."""
    cells = {}
    for b in d["blocks"]:
        if b["type"] == "data":
            text = f"D{b['points']}/{b['spawnCount']}"
        elif b["type"] == "program":
            text = f"P:{b['programType'].upper()}/{b['spawnCount']}"
        else:
            hidden = f"D{b['points']}" if b["isData"] else b["programType"].upper()
            text = f"Q:{hidden}/{b['spawnCount']}"
        cells[(b["row"], b["col"])] = text
    for r in d["resources"]:
        text = "S+" if r["dataSiphon"] else ""
        if r["credits"]:
            text += f"c{r['credits']}"
        if r["energy"]:
            text += f"e{r['energy']}"
        cells[(r["row"], r["col"])] = cells.get((r["row"], r["col"]), "") + text
    cells[pos(d["exit"])] = "X" + cells.get(pos(d["exit"]), "")
    p = pos(d["player"])
    cells[p] = "@" + cells.get(p, "")
    return [[cells.get((row, col), "") for col in range(6)] for row in range(5, -1, -1)]
