"""state_to_json / state_from_json: the protocol.md §6 state schema (canonical getState form, setState checks).

Not jittable: these run on concrete arrays in plain Python.
"""

import jax.numpy as jnp
import numpy as np

from .constants import (
    BLOCK,
    CRYPTOG,
    DATA_SIPHON,
    DIED,
    ENEMY_MAX_HP,
    ENEMY_TYPE_NAMES,
    EXIT,
    KIND_DATA,
    KIND_PROGRAM,
    KIND_QUESTION,
    LAST_STAGE,
    MAX_OCCUPANTS,
    NUM_CELLS,
    NUM_PROGRAMS,
    PROGRAM_NAMES,
    RUNNING,
    UNDO_DEPTH,
    VALUE_CAP,
    WON,
)
from .grid import CORNERS
from .state import Board, EnvState, empty_board
from .undo import snapshots, stack_rows

_KIND_NAMES = {KIND_DATA: "data", KIND_PROGRAM: "program", KIND_QUESTION: "question"}
_PROGRAM_ALIASES = {
    "siphplus": "siph+",
    "siph_plus": "siph+",
    "dbom": "d_bom",
    "d_bomb": "d_bom",
    "antiv": "anti-v",
    "anti_v": "anti-v",
    "atkplus": "atk+",
    "atk_plus": "atk+",
}
U32_MAX = 4294967295


# ----------------------------------------------------------------------------- to JSON


def _rc(c):
    return int(c) // 6, int(c) % 6


def _board_lists(b, exit_pos):
    """The parts shared by the state and a snapshot, from a numpy view of a Board."""
    row, col = _rc(b["player_pos"])
    player = {
        "row": row,
        "col": col,
        "hp": int(b["hp"]),
        "credits": int(b["credits"]),
        "energy": int(b["energy"]),
        "dataSiphons": int(b["data_siphons"]),
        "attackDamage": int(b["attack"]),
        "score": int(b["score"]),
    }
    enemies = []
    for i in range(MAX_OCCUPANTS):
        if not b["e_active"][i]:
            break
        etype = int(b["e_type"][i])
        r, c = _rc(b["e_pos"][i])
        lk = _rc(b["e_last_known"][i]) if etype == CRYPTOG else (None, None)
        enemies.append(
            {
                "type": ENEMY_TYPE_NAMES[etype],
                "row": r,
                "col": c,
                "hp": int(b["e_hp"][i]),
                "stunned": bool(b["e_stunned"][i]),
                "spawnedFromSiphon": bool(b["e_from_siphon"][i]),
                "isFromScheduledTask": bool(b["e_from_sched"][i]),
                "disabledTurns": int(b["e_disabled"][i]),
                "lastKnownRow": lk[0],
                "lastKnownCol": lk[1],
            }
        )
    transmissions = []
    for i in range(MAX_OCCUPANTS):
        if not b["t_active"][i]:
            break
        r, c = _rc(b["t_pos"][i])
        transmissions.append(
            {
                "row": r,
                "col": c,
                "turnsRemaining": int(b["t_countdown"][i]),
                "enemyType": ENEMY_TYPE_NAMES[int(b["t_type"][i])],
                "isFromScheduledTask": bool(b["t_from_sched"][i]),
                "spawnedFromSiphon": bool(b["t_from_siphon"][i]),
            }
        )
    blocks, resources, flags = [], [], []
    for cell in range(NUM_CELLS):
        r, c = _rc(cell)
        content = int(b["content"][cell])
        if content == BLOCK:
            kind = int(b["block_kind"][cell])
            data = bool(b["hidden_is_data"][cell])
            entry = {
                "row": r,
                "col": c,
                "type": _KIND_NAMES[kind],
                "siphoned": bool(b["siphoned"][cell]),
                "spawnCount": int(b["spawn_count"][cell]),
            }
            if kind == KIND_QUESTION:
                entry["isData"] = data
            if data:
                entry["points"] = int(b["points"][cell])
            else:
                p = int(b["program"][cell])
                entry["programType"] = PROGRAM_NAMES[p]
                entry["programActionIndex"] = p + 5
            blocks.append(entry)
        cr, en = int(b["cell_credits"][cell]), int(b["cell_energy"][cell])
        if content == DATA_SIPHON or cr > 0 or en > 0:
            resources.append(
                {
                    "row": r,
                    "col": c,
                    "credits": cr,
                    "energy": en,
                    "dataSiphon": content == DATA_SIPHON,
                }
            )
        if b["siphoned"][cell] or b["siphon_center"][cell]:
            flags.append(
                {
                    "row": r,
                    "col": c,
                    "siphoned": bool(b["siphoned"][cell]),
                    "siphonCenter": bool(b["siphon_center"][cell]),
                }
            )
    er, ec = _rc(exit_pos)
    return {
        "player": player,
        "turn": int(b["turn"]),
        "ownedPrograms": [p + 5 for p in range(NUM_PROGRAMS) if b["owned"][p]],
        "enemies": enemies,
        "transmissions": transmissions,
        "blocks": blocks,
        "resources": resources,
        "exit": {"row": er, "col": ec},
        "cellFlags": flags,
        "showActivated": bool(b["show_activated"]),
        "scheduledTasksDisabled": bool(b["tasks_disabled"]),
        "atkPlusUsesThisStage": int(b["atk_plus_uses"]),
    }


def _numpy_board(board, index=None):
    out = {}
    for name in Board.__dataclass_fields__:
        value = np.asarray(getattr(board, name))
        out[name] = value if index is None else value[index]
    return out


def state_to_json(state):
    """The canonical getState form (protocol.md §6.6) of one (unbatched) state."""
    exit_pos = int(state.exit_pos)
    parts = _board_lists(_numpy_board(state.board), exit_pos)
    history = [
        _board_lists(snap, exit_pos)
        for snap in snapshots(state.history, state.history_count, state.history_start)
    ]
    return {
        "player": parts["player"],
        "enemies": parts["enemies"],
        "transmissions": parts["transmissions"],
        "blocks": parts["blocks"],
        "resources": parts["resources"],
        "ownedPrograms": parts["ownedPrograms"],
        "stage": int(state.stage),
        "turn": parts["turn"],
        "showActivated": parts["showActivated"],
        "scheduledTasksDisabled": parts["scheduledTasksDisabled"],
        "exit": parts["exit"],
        "cellFlags": parts["cellFlags"],
        "scheduledTaskInterval": int(state.interval),
        "nextScheduledTaskTurn": int(state.next_task_turn),
        "pendingSiphonTransmissions": int(state.pending),
        "stepActive": bool(state.step_active),
        "atkPlusUsesThisStage": parts["atkPlusUsesThisStage"],
        "seed": int(state.seed),
        "stepIndex": int(state.step_index),
        "gameWon": int(state.outcome) == WON,
        "undoHistory": history,
    }


# ----------------------------------------------------------------------------- from JSON


class _Reader:
    """Typed access to one JSON object with path-carrying errors."""

    def __init__(self, obj, path, allowed):
        if not isinstance(obj, dict):
            raise ValueError(f"{path}: expected an object")
        for key in obj:
            if key not in allowed:
                raise ValueError(f"{path}.{key}: unknown key")
        self.obj, self.path = obj, path

    def has(self, key):
        return self.obj.get(key) is not None  # absent and null mean the same (protocol.md §3.2)

    def fail(self, key, reason):
        raise ValueError(f"{self.path}.{key}: {reason}")

    def int(self, key, default=None, lo=0, hi=VALUE_CAP, required=False):
        if not self.has(key):
            if required:
                self.fail(key, "missing required field")
            return default
        v = self.obj[key]
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer() and not isinstance(v, bool):
                v = int(v)
            else:
                self.fail(key, "expected an integer")
        if v < lo or v > hi:
            self.fail(key, "out of range")
        return v

    def bool(self, key, default=False):
        if not self.has(key):
            return default
        v = self.obj[key]
        if not isinstance(v, bool):
            self.fail(key, "expected a boolean")
        return v

    def str(self, key, required=False):
        """A string, lower-cased (enum strings match case-insensitively)."""
        if not self.has(key):
            if required:
                self.fail(key, "missing required field")
            return None
        v = self.obj[key]
        if not isinstance(v, str):
            self.fail(key, "expected a string")
        return v.lower()

    def list(self, key):
        v = self.obj.get(key)
        v = [] if v is None else v
        if not isinstance(v, list):
            self.fail(key, "expected a list")
        return v

    def sub(self, key, allowed, required=False):
        if not self.has(key):
            if required:
                self.fail(key, "missing required field")
            return None
        return _Reader(self.obj[key], f"{self.path}.{key}", allowed)


_PLAYER_KEYS = {"row", "col", "hp", "credits", "energy", "dataSiphons", "attackDamage", "score"}
_ENEMY_KEYS = {
    "type",
    "row",
    "col",
    "hp",
    "stunned",
    "spawnedFromSiphon",
    "isFromScheduledTask",
    "disabledTurns",
    "lastKnownRow",
    "lastKnownCol",
}
_TX_KEYS = {"row", "col", "turnsRemaining", "enemyType", "isFromScheduledTask", "spawnedFromSiphon"}
_BLOCK_KEYS = {
    "row",
    "col",
    "type",
    "siphoned",
    "points",
    "spawnCount",
    "programType",
    "programActionIndex",
    "isData",
}
_RESOURCE_KEYS = {"row", "col", "credits", "energy", "dataSiphon"}
_FLAG_KEYS = {"row", "col", "siphoned", "siphonCenter"}
_SNAPSHOT_KEYS = {
    "player",
    "turn",
    "ownedPrograms",
    "enemies",
    "transmissions",
    "blocks",
    "resources",
    "exit",
    "cellFlags",
    "showActivated",
    "scheduledTasksDisabled",
    "atkPlusUsesThisStage",
}
_STATE_KEYS = _SNAPSHOT_KEYS | {
    "stage",
    "scheduledTaskInterval",
    "nextScheduledTaskTurn",
    "pendingSiphonTransmissions",
    "stepActive",
    "seed",
    "stepIndex",
    "gameWon",
    "undoHistory",
}


def _enemy_type(reader, key):
    name = reader.str(key, required=True)
    if name not in ENEMY_TYPE_NAMES:
        reader.fail(key, f"unknown enemy type {name!r}")
    return ENEMY_TYPE_NAMES.index(name)


def _program_name(reader, key):
    name = reader.str(key)
    if name is None:
        return None
    name = _PROGRAM_ALIASES.get(name, name)
    if name not in PROGRAM_NAMES:
        reader.fail(key, f"unknown program {reader.obj[key]!r}")
    return PROGRAM_NAMES.index(name)


def _cell(reader):
    return reader.int("row", lo=0, hi=5, required=True) * 6 + reader.int(
        "col", lo=0, hi=5, required=True
    )


def _parse_board(r, path, exit_pos, is_snapshot):
    """Fill a numpy Board dict from a state or snapshot reader (occupancy rules included)."""
    b = {name: np.asarray(v).copy() for name, v in _numpy_board(_EMPTY_BOARD).items()}
    pl = r.sub("player", _PLAYER_KEYS, required=True)
    b["player_pos"] = np.int32(_cell(pl))
    b["hp"] = np.int32(pl.int("hp", 3, 0, 3))
    b["credits"] = np.int32(pl.int("credits", 0))
    b["energy"] = np.int32(pl.int("energy", 0))
    b["data_siphons"] = np.int32(pl.int("dataSiphons", 0))
    b["attack"] = np.int32(pl.int("attackDamage", 1, lo=1))
    b["score"] = np.int32(pl.int("score", 0))
    b["turn"] = np.int32(r.int("turn", 0))
    b["show_activated"] = np.bool_(r.bool("showActivated"))
    b["tasks_disabled"] = np.bool_(r.bool("scheduledTasksDisabled"))
    b["atk_plus_uses"] = np.int32(r.int("atkPlusUsesThisStage", 0, 0, 2))

    owned = np.zeros(NUM_PROGRAMS, bool)
    for k, a in enumerate(r.list("ownedPrograms")):
        if isinstance(a, bool) or not isinstance(a, int):
            raise ValueError(f"{path}.ownedPrograms[{k}]: expected an integer")
        if not 5 <= a <= 27:
            raise ValueError(f"{path}.ownedPrograms[{k}]: out of range")
        if owned[a - 5]:
            raise ValueError(f"{path}.ownedPrograms[{k}]: repeated program")
        owned[a - 5] = True
    b["owned"] = owned

    content = np.zeros(NUM_CELLS, np.int32)
    content[exit_pos] = EXIT
    seen_block, seen_res, seen_flag = set(), set(), set()
    pickups = set()
    for k, entry in enumerate(r.list("resources")):
        rr = _Reader(entry, f"{path}.resources[{k}]", _RESOURCE_KEYS)
        cell = _cell(rr)
        if cell in seen_res:
            raise ValueError(f"{rr.path}: two resources entries for one cell")
        seen_res.add(cell)
        cr, en = rr.int("credits", 0), rr.int("energy", 0)
        if cr > 0 and en > 0:
            raise ValueError(f"{rr.path}: a cell holds both credits and energy")
        if rr.bool("dataSiphon"):
            if cell == exit_pos:
                raise ValueError(f"{rr.path}: a data-siphon pickup on the exit cell")
            pickups.add(cell)
            content[cell] = DATA_SIPHON
        b["cell_credits"][cell], b["cell_energy"][cell] = cr, en
    siphoned = np.zeros(NUM_CELLS, bool)
    for k, entry in enumerate(r.list("blocks")):
        rb = _Reader(entry, f"{path}.blocks[{k}]", _BLOCK_KEYS)
        cell = _cell(rb)
        if cell in seen_block:
            raise ValueError(f"{rb.path}: two blocks entries for one cell")
        seen_block.add(cell)
        if cell == exit_pos or cell in pickups:
            raise ValueError(f"{rb.path}: a block on the exit cell or on a data-siphon pickup")
        kind_name = rb.str("type", required=True)
        kinds = {v: k2 for k2, v in _KIND_NAMES.items()}
        if kind_name not in kinds:
            rb.fail("type", f"unknown block type {kind_name!r}")
        kind = kinds[kind_name]
        points = rb.int("points")
        prog_by_name = _program_name(rb, "programType")
        action = rb.int("programActionIndex", lo=5, hi=27)
        is_data_flag = rb.bool("isData", None)
        if kind == KIND_QUESTION:
            if is_data_flag is None:
                rb.fail("isData", "missing required field")
            data = is_data_flag
        else:
            data = kind == KIND_DATA
        program = 0
        if data:
            if points is None:
                if kind == KIND_QUESTION:
                    rb.fail("points", "missing required field")
                points = 5
        else:
            if prog_by_name is None and action is None:
                rb.fail("programType", "missing required field (programType or programActionIndex)")
            if prog_by_name is not None and action is not None and prog_by_name != action - 5:
                rb.fail("programActionIndex", "does not match programType")
            program = prog_by_name if prog_by_name is not None else action - 5
        spawn = rb.int("spawnCount", points if data else 2)
        content[cell] = BLOCK
        b["block_kind"][cell] = kind
        b["hidden_is_data"][cell] = data
        b["points"][cell] = points if data else 0
        b["program"][cell] = program
        b["spawn_count"][cell] = spawn
        siphoned[cell] = rb.bool("siphoned")
    for k, entry in enumerate(r.list("cellFlags")):
        rf = _Reader(entry, f"{path}.cellFlags[{k}]", _FLAG_KEYS)
        cell = _cell(rf)
        if cell in seen_flag:
            raise ValueError(f"{rf.path}: two cellFlags entries for one cell")
        seen_flag.add(cell)
        siphoned[cell] |= rf.bool("siphoned")
        b["siphon_center"][cell] = rf.bool("siphonCenter")
    b["siphoned"] = siphoned
    b["content"] = content

    occupant = {}
    player = int(b["player_pos"])
    enemies = r.list("enemies")
    txs = r.list("transmissions")
    if len(enemies) + len(txs) > MAX_OCCUPANTS:
        raise ValueError(f"{path}.enemies: more than {MAX_OCCUPANTS} enemies and transmissions")
    for k, entry in enumerate(enemies):
        re_ = _Reader(entry, f"{path}.enemies[{k}]", _ENEMY_KEYS)
        etype = _enemy_type(re_, "type")
        cell = _cell(re_)
        hp = re_.int("hp", lo=1, hi=int(ENEMY_MAX_HP[etype]), required=True)
        lkr = re_.int("lastKnownRow", None, 0, 5)
        lkc = re_.int("lastKnownCol", None, 0, 5)
        if (lkr is None) != (lkc is None):
            raise ValueError(
                f"{re_.path}.lastKnownRow: lastKnownRow and lastKnownCol must both be null or both set"
            )
        last_known = cell if lkr is None or etype != CRYPTOG else lkr * 6 + lkc
        stunned = re_.bool("stunned")
        disabled = re_.int("disabledTurns", 0, 0, 1)
        from_siphon, from_sched = re_.bool("spawnedFromSiphon"), re_.bool("isFromScheduledTask")
        if is_snapshot and (from_siphon or from_sched):
            raise ValueError(f"{re_.path}: origin flags must be false inside a snapshot")
        if is_snapshot and (stunned or disabled):
            raise ValueError(f"{re_.path}: a snapshot enemy cannot be stunned or disabled")
        if cell in occupant:
            raise ValueError(f"{re_.path}: two enemies on one cell")
        if cell == player:
            raise ValueError(f"{re_.path}: an enemy on the player's cell")
        occupant[cell] = "enemy"
        b["e_active"][k], b["e_type"][k], b["e_pos"][k], b["e_hp"][k] = True, etype, cell, hp
        b["e_disabled"][k], b["e_stunned"][k] = disabled, stunned
        b["e_from_siphon"][k], b["e_from_sched"][k], b["e_last_known"][k] = (
            from_siphon,
            from_sched,
            last_known,
        )
    for k, entry in enumerate(txs):
        rt = _Reader(entry, f"{path}.transmissions[{k}]", _TX_KEYS)
        cell = _cell(rt)
        countdown = rt.int("turnsRemaining", lo=1, required=True)
        etype = _enemy_type(rt, "enemyType")
        from_siphon, from_sched = rt.bool("spawnedFromSiphon"), rt.bool("isFromScheduledTask")
        if is_snapshot and (from_siphon or from_sched):
            raise ValueError(f"{rt.path}: origin flags must be false inside a snapshot")
        if cell in occupant:
            kind = occupant[cell]
            reason = (
                "two transmissions on one cell"
                if kind == "tx"
                else "an enemy and a transmission on one cell"
            )
            raise ValueError(f"{rt.path}: {reason}")
        if content[cell] == BLOCK:
            raise ValueError(f"{rt.path}: a transmission on a block")
        if cell == player:
            raise ValueError(f"{rt.path}: a transmission on the player's cell")
        occupant[cell] = "tx"
        b["t_active"][k], b["t_pos"][k], b["t_countdown"][k], b["t_type"][k] = (
            True,
            cell,
            countdown,
            etype,
        )
        b["t_from_siphon"][k], b["t_from_sched"][k] = from_siphon, from_sched
    return b


def _parse_exit(r, default):
    ex = r.sub("exit", {"row", "col"})
    if ex is None:
        return default
    cell = _cell(ex)
    if cell not in CORNERS:
        raise ValueError(f"{r.path}.exit: not a corner")
    return cell


def _to_board(b):
    return Board(**{name: jnp.asarray(v) for name, v in b.items()})


def state_from_json(d):
    """An EnvState from a setState-style dict; raises ValueError("state.<path>: <reason>") when invalid."""
    from .mask import action_mask

    r = _Reader(d, "state", _STATE_KEYS)
    exit_pos = _parse_exit(r, 35)
    board = _parse_board(r, "state", exit_pos, is_snapshot=False)
    stage = r.int("stage", 1, 1, LAST_STAGE)
    interval = r.int("scheduledTaskInterval", 12, 4, 12)
    next_task = r.int("nextScheduledTaskTurn", interval)
    pending = r.int("pendingSiphonTransmissions", 0)
    step_active = r.bool("stepActive")
    seed = r.int("seed", 0, 0, U32_MAX)
    step_index = r.int("stepIndex", 0, 0, U32_MAX)
    won = r.bool("gameWon")
    if won and (stage != LAST_STAGE or int(board["hp"]) == 0):
        r.fail("gameWon", "requires stage 8 and player.hp >= 1")
    history_list = r.list("undoHistory")
    if len(history_list) > UNDO_DEPTH:
        r.fail("undoHistory", f"more than {UNDO_DEPTH} snapshots")
    parsed = []
    for k, entry in enumerate(history_list):
        path = f"state.undoHistory[{k}]"
        rs = _Reader(entry, path, _SNAPSHOT_KEYS)
        if _parse_exit(rs, exit_pos) != exit_pos:
            raise ValueError(f"{path}.exit: differs from the state's exit")
        parsed.append(_parse_board(rs, path, exit_pos, is_snapshot=True))
    history = stack_rows(parsed)
    outcome = WON if won else (DIED if int(board["hp"]) == 0 else RUNNING)
    state = EnvState(
        board=_to_board(board),
        seed=jnp.asarray(seed, jnp.uint32),
        step_index=jnp.asarray(step_index, jnp.uint32),
        outcome=jnp.asarray(outcome, jnp.int32),
        stage=jnp.asarray(stage, jnp.int32),
        interval=jnp.asarray(interval, jnp.int32),
        next_task_turn=jnp.asarray(next_task, jnp.int32),
        pending=jnp.asarray(pending, jnp.int32),
        step_active=jnp.asarray(step_active),
        exit_pos=jnp.asarray(exit_pos, jnp.int32),
        history=history,
        history_count=jnp.asarray(len(history_list), jnp.int32),
        history_start=jnp.asarray(0, jnp.int32),
    )
    if outcome == RUNNING and not bool(np.any(np.asarray(action_mask(state)))):
        raise ValueError("state: no legal action")
    return state


_EMPTY_BOARD = empty_board()
