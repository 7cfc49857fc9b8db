"""state_to_json / state_from_json: the protocol.md §6 state schema.

`state_to_json` writes the canonical getState form; `state_from_json` reads a
setState object with its checks (json_reader.py gives the errors their
paths). Not jittable: these run on concrete arrays in plain Python.
"""

from typing import Any

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
    FIRST_PROGRAM_ACTION,
    KIND_DATA,
    KIND_PROGRAM,
    KIND_QUESTION,
    LAST_STAGE,
    MAX_HP,
    MAX_OCCUPANTS,
    NUM_ACTIONS,
    NUM_CELLS,
    NUM_PROGRAMS,
    PROGRAM_NAMES,
    RUNNING,
    UNDO_DEPTH,
    WON,
)
from .grid import CORNERS, cell_at, col, row
from .json_reader import (
    BLOCK_KEYS,
    ENEMY_KEYS,
    FLAG_KEYS,
    PLAYER_KEYS,
    RESOURCE_KEYS,
    SNAPSHOT_KEYS,
    STATE_KEYS,
    TRANSMISSION_KEYS,
    Reader,
)
from .mask import action_mask
from .state import Board, EnvState, empty_board
from .undo import snapshots, stack_rows

_KIND_NAMES = {KIND_DATA: "data", KIND_PROGRAM: "program", KIND_QUESTION: "question"}
_KINDS_BY_NAME = {name: kind for kind, name in _KIND_NAMES.items()}
U32_MAX = 4294967295
NumpyBoard = dict[str, Any]  # a Board's fields as numpy values, by field name
Json = dict[str, Any]


# ----------------------------------------------------------------------------- to JSON


def _active_count(active: np.ndarray) -> int:
    """How many slots the list uses: its active entries are a prefix of the slots."""
    return int(np.argmin(np.append(active, False)))


def _row_col(c: Any) -> dict[str, int]:
    return {"row": row(int(c)), "col": col(int(c))}


def _player_json(b: NumpyBoard) -> Json:
    return {
        **_row_col(b["player_pos"]),
        "hp": int(b["hp"]),
        "credits": int(b["credits"]),
        "energy": int(b["energy"]),
        "dataSiphons": int(b["data_siphons"]),
        "attackDamage": int(b["attack"]),
        "score": int(b["score"]),
    }


def _enemies_json(b: NumpyBoard) -> list[Json]:
    enemies = []
    for i in range(_active_count(b["e_active"])):
        etype = int(b["e_type"][i])
        last_known = b["e_last_known"][i]
        enemies.append(
            {
                "type": ENEMY_TYPE_NAMES[etype],
                **_row_col(b["e_pos"][i]),
                "hp": int(b["e_hp"][i]),
                "stunned": bool(b["e_stunned"][i]),
                "spawnedFromSiphon": bool(b["e_from_siphon"][i]),
                "isFromScheduledTask": bool(b["e_from_sched"][i]),
                "disabledTurns": int(b["e_disabled"][i]),
                "lastKnownRow": row(int(last_known)) if etype == CRYPTOG else None,
                "lastKnownCol": col(int(last_known)) if etype == CRYPTOG else None,
            }
        )
    return enemies


def _transmissions_json(b: NumpyBoard) -> list[Json]:
    return [
        {
            **_row_col(b["t_pos"][i]),
            "turnsRemaining": int(b["t_countdown"][i]),
            "enemyType": ENEMY_TYPE_NAMES[int(b["t_type"][i])],
            "isFromScheduledTask": bool(b["t_from_sched"][i]),
            "spawnedFromSiphon": bool(b["t_from_siphon"][i]),
        }
        for i in range(_active_count(b["t_active"]))
    ]


def _block_json(b: NumpyBoard, cell: int) -> Json:
    kind = int(b["block_kind"][cell])
    data = bool(b["hidden_is_data"][cell])
    entry = {
        **_row_col(cell),
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
        entry["programActionIndex"] = p + FIRST_PROGRAM_ACTION
    return entry


def _cells_json(b: NumpyBoard) -> tuple[list[Json], list[Json], list[Json]]:
    """The blocks, resources and cell flags lists, in cell order."""
    blocks, resources, flags = [], [], []
    for cell in range(NUM_CELLS):
        content = int(b["content"][cell])
        if content == BLOCK:
            blocks.append(_block_json(b, cell))
        cr, en = int(b["cell_credits"][cell]), int(b["cell_energy"][cell])
        if content == DATA_SIPHON or cr > 0 or en > 0:
            resources.append(
                {
                    **_row_col(cell),
                    "credits": cr,
                    "energy": en,
                    "dataSiphon": content == DATA_SIPHON,
                }
            )
        if b["siphoned"][cell] or b["siphon_center"][cell]:
            flags.append(
                {
                    **_row_col(cell),
                    "siphoned": bool(b["siphoned"][cell]),
                    "siphonCenter": bool(b["siphon_center"][cell]),
                }
            )
    return blocks, resources, flags


def _board_json(b: NumpyBoard, exit_pos: int) -> Json:
    """The parts shared by the state and a snapshot, from a numpy view of a Board."""
    blocks, resources, flags = _cells_json(b)
    return {
        "player": _player_json(b),
        "turn": int(b["turn"]),
        "ownedPrograms": [p + FIRST_PROGRAM_ACTION for p in range(NUM_PROGRAMS) if b["owned"][p]],
        "enemies": _enemies_json(b),
        "transmissions": _transmissions_json(b),
        "blocks": blocks,
        "resources": resources,
        "exit": _row_col(exit_pos),
        "cellFlags": flags,
        "showActivated": bool(b["show_activated"]),
        "scheduledTasksDisabled": bool(b["tasks_disabled"]),
        "atkPlusUsesThisStage": int(b["atk_plus_uses"]),
    }


def _numpy_board(board: Board) -> NumpyBoard:
    return {name: np.asarray(getattr(board, name)) for name in Board.__dataclass_fields__}


def state_to_json(state: EnvState) -> Json:
    """The canonical getState form (protocol.md §6.6) of one (unbatched) state."""
    exit_pos = int(state.exit_pos)
    parts = _board_json(_numpy_board(state.board), exit_pos)
    history = [
        _board_json(snap, exit_pos)
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


def _parse_player(r: Reader, b: NumpyBoard) -> None:
    """The player object and the board's scalar fields."""
    pl = r.sub("player", PLAYER_KEYS, required=True)
    assert pl is not None  # required
    b["player_pos"] = np.int32(pl.cell())
    b["hp"] = np.int32(pl.read_int("hp", MAX_HP, 0, MAX_HP))
    b["credits"] = np.int32(pl.read_int("credits", 0))
    b["energy"] = np.int32(pl.read_int("energy", 0))
    b["data_siphons"] = np.int32(pl.read_int("dataSiphons", 0))
    b["attack"] = np.int32(pl.read_int("attackDamage", 1, lo=1))
    b["score"] = np.int32(pl.read_int("score", 0))
    b["turn"] = np.int32(r.read_int("turn", 0))
    b["show_activated"] = np.bool_(r.read_bool("showActivated"))
    b["tasks_disabled"] = np.bool_(r.read_bool("scheduledTasksDisabled"))
    b["atk_plus_uses"] = np.int32(r.read_int("atkPlusUsesThisStage", 0, 0, 2))


def _parse_owned(r: Reader) -> np.ndarray:
    """ownedPrograms: distinct program action indices."""
    owned = np.zeros(NUM_PROGRAMS, bool)
    for k, a in enumerate(r.read_list("ownedPrograms")):
        where = f"{r.path}.ownedPrograms[{k}]"
        if isinstance(a, bool) or not isinstance(a, int):
            raise ValueError(f"{where}: expected an integer")
        if not FIRST_PROGRAM_ACTION <= a < NUM_ACTIONS:
            raise ValueError(f"{where}: out of range")
        if owned[a - FIRST_PROGRAM_ACTION]:
            raise ValueError(f"{where}: repeated program")
        owned[a - FIRST_PROGRAM_ACTION] = True
    return owned


def _claim(claimed: set[int], cell: int, entry: Reader, what: str) -> None:
    """Record one entry of a per-cell list; a second entry for a cell is an error."""
    if cell in claimed:
        raise ValueError(f"{entry.path}: two {what} entries for one cell")
    claimed.add(cell)


def _parse_resources(r: Reader, b: NumpyBoard, exit_pos: int) -> None:
    """resources: loose credits or energy, and data-siphon pickups (into `content`)."""
    claimed: set[int] = set()
    for entry in r.entries("resources", RESOURCE_KEYS):
        cell = entry.cell()
        _claim(claimed, cell, entry, "resources")
        cr, en = entry.read_int("credits", 0), entry.read_int("energy", 0)
        if cr > 0 and en > 0:
            raise ValueError(f"{entry.path}: a cell holds both credits and energy")
        if entry.read_bool("dataSiphon"):
            if cell == exit_pos:
                raise ValueError(f"{entry.path}: a data-siphon pickup on the exit cell")
            b["content"][cell] = DATA_SIPHON
        b["cell_credits"][cell], b["cell_energy"][cell] = cr, en


def _block_contents(entry: Reader, kind: int) -> tuple[bool, int, int]:
    """A block's (is data, points, program), with the defaults of protocol.md §6.3."""
    points = entry.read_int("points")
    by_name = entry.program("programType")
    action = entry.read_int("programActionIndex", lo=FIRST_PROGRAM_ACTION, hi=NUM_ACTIONS - 1)
    is_data = entry.read_bool("isData", None)
    if kind == KIND_QUESTION:
        if is_data is None:
            entry.fail("isData", "missing required field")
        data = is_data
    else:
        data = kind == KIND_DATA
    if data:
        if points is None:
            if kind == KIND_QUESTION:
                entry.fail("points", "missing required field")
            points = 5
        return True, points, 0
    if by_name is None and action is None:
        entry.fail("programType", "missing required field (programType or programActionIndex)")
    if by_name is not None and action is not None and by_name != action - FIRST_PROGRAM_ACTION:
        entry.fail("programActionIndex", "does not match programType")
    return False, 0, by_name if by_name is not None else action - FIRST_PROGRAM_ACTION


def _parse_blocks(r: Reader, b: NumpyBoard, exit_pos: int) -> None:
    """blocks: kind, hidden contents, spawn count and siphoned mark of each block."""
    claimed: set[int] = set()
    for entry in r.entries("blocks", BLOCK_KEYS):
        cell = entry.cell()
        _claim(claimed, cell, entry, "blocks")
        if cell == exit_pos or b["content"][cell] == DATA_SIPHON:
            raise ValueError(f"{entry.path}: a block on the exit cell or on a data-siphon pickup")
        kind_name = entry.read_str("type", required=True)
        if kind_name not in _KINDS_BY_NAME:
            entry.fail("type", f"unknown block type {kind_name!r}")
        kind = _KINDS_BY_NAME[kind_name]
        data, points, program = _block_contents(entry, kind)
        b["content"][cell] = BLOCK
        b["block_kind"][cell] = kind
        b["hidden_is_data"][cell] = data
        b["points"][cell] = points
        b["program"][cell] = program
        b["spawn_count"][cell] = entry.read_int("spawnCount", points if data else 2)
        b["siphoned"][cell] = entry.read_bool("siphoned")


def _parse_cell_flags(r: Reader, b: NumpyBoard) -> None:
    """cellFlags: siphoned marks (added to the blocks') and siphon centres."""
    claimed: set[int] = set()
    for entry in r.entries("cellFlags", FLAG_KEYS):
        cell = entry.cell()
        _claim(claimed, cell, entry, "cellFlags")
        b["siphoned"][cell] |= entry.read_bool("siphoned")
        b["siphon_center"][cell] = entry.read_bool("siphonCenter")


def _origin_flags(entry: Reader, is_snapshot: bool) -> tuple[bool, bool]:
    """(spawnedFromSiphon, isFromScheduledTask); always false inside a snapshot."""
    from_siphon, from_sched = (
        entry.read_bool("spawnedFromSiphon"),
        entry.read_bool("isFromScheduledTask"),
    )
    if is_snapshot and (from_siphon or from_sched):
        raise ValueError(f"{entry.path}: origin flags must be false inside a snapshot")
    return from_siphon, from_sched


def _parse_enemy(entry: Reader) -> tuple[int, int, int, int, int, bool]:
    """(type, cell, hp, last-known cell, disabled turns, stunned) of one enemy."""
    etype = entry.enemy_type("type")
    cell = entry.cell()
    hp = entry.read_int("hp", lo=1, hi=int(ENEMY_MAX_HP[etype]), required=True)
    lkr = entry.read_int("lastKnownRow", None, 0, 5)
    lkc = entry.read_int("lastKnownCol", None, 0, 5)
    if (lkr is None) != (lkc is None):
        entry.fail("lastKnownRow", "lastKnownRow and lastKnownCol must both be null or both set")
    last_known = cell if lkr is None or etype != CRYPTOG else cell_at(lkr, lkc)
    stunned = entry.read_bool("stunned")
    disabled = entry.read_int("disabledTurns", 0, 0, 1)
    return etype, cell, hp, last_known, disabled, stunned


def _set_slot(b: NumpyBoard, k: int, **fields: Any) -> None:
    """Write one list entry: b[field][k] = value for each field."""
    for field, value in fields.items():
        b[field][k] = value


def _parse_occupants(r: Reader, b: NumpyBoard, is_snapshot: bool) -> None:
    """enemies, then transmissions: at most one occupant per cell, none on the player's."""
    occupant: dict[int, str] = {}
    player = int(b["player_pos"])
    if len(r.read_list("enemies")) + len(r.read_list("transmissions")) > MAX_OCCUPANTS:
        raise ValueError(f"{r.path}.enemies: more than {MAX_OCCUPANTS} enemies and transmissions")
    for k, entry in enumerate(r.entries("enemies", ENEMY_KEYS)):
        etype, cell, hp, last_known, disabled, stunned = _parse_enemy(entry)
        from_siphon, from_sched = _origin_flags(entry, is_snapshot)
        if is_snapshot and (stunned or disabled):
            raise ValueError(f"{entry.path}: a snapshot enemy cannot be stunned or disabled")
        if cell in occupant:
            raise ValueError(f"{entry.path}: two enemies on one cell")
        if cell == player:
            raise ValueError(f"{entry.path}: an enemy on the player's cell")
        occupant[cell] = "enemy"
        _set_slot(
            b,
            k,
            e_active=True,
            e_type=etype,
            e_pos=cell,
            e_hp=hp,
            e_disabled=disabled,
            e_stunned=stunned,
            e_from_siphon=from_siphon,
            e_from_sched=from_sched,
            e_last_known=last_known,
        )
    for k, entry in enumerate(r.entries("transmissions", TRANSMISSION_KEYS)):
        cell = entry.cell()
        countdown = entry.read_int("turnsRemaining", lo=1, required=True)
        etype = entry.enemy_type("enemyType")
        from_siphon, from_sched = _origin_flags(entry, is_snapshot)
        if cell in occupant:
            reason = (
                "two transmissions on one cell"
                if occupant[cell] == "tx"
                else "an enemy and a transmission on one cell"
            )
            raise ValueError(f"{entry.path}: {reason}")
        if b["content"][cell] == BLOCK:
            raise ValueError(f"{entry.path}: a transmission on a block")
        if cell == player:
            raise ValueError(f"{entry.path}: a transmission on the player's cell")
        occupant[cell] = "tx"
        _set_slot(
            b,
            k,
            t_active=True,
            t_pos=cell,
            t_countdown=countdown,
            t_type=etype,
            t_from_siphon=from_siphon,
            t_from_sched=from_sched,
        )


def _parse_board(r: Reader, exit_pos: int, is_snapshot: bool) -> NumpyBoard:
    """A numpy Board from a state or snapshot object (occupancy rules included)."""
    b = {name: value.copy() for name, value in _numpy_board(_EMPTY_BOARD).items()}
    _parse_player(r, b)
    b["owned"] = _parse_owned(r)
    b["content"][exit_pos] = EXIT
    _parse_resources(r, b, exit_pos)
    _parse_blocks(r, b, exit_pos)
    _parse_cell_flags(r, b)
    _parse_occupants(r, b, is_snapshot)
    return b


def _parse_exit(r: Reader, default: int) -> int:
    ex = r.sub("exit", {"row", "col"})
    if ex is None:
        return default
    cell = ex.cell()
    if cell not in CORNERS:
        raise ValueError(f"{r.path}.exit: not a corner")
    return cell


def _parse_history(r: Reader, exit_pos: int) -> list[NumpyBoard]:
    """undoHistory: up to UNDO_DEPTH snapshots, oldest first, with the state's exit."""
    if len(r.read_list("undoHistory")) > UNDO_DEPTH:
        r.fail("undoHistory", f"more than {UNDO_DEPTH} snapshots")
    boards = []
    for snapshot in r.entries("undoHistory", SNAPSHOT_KEYS):
        if _parse_exit(snapshot, exit_pos) != exit_pos:
            raise ValueError(f"{snapshot.path}.exit: differs from the state's exit")
        boards.append(_parse_board(snapshot, exit_pos, is_snapshot=True))
    return boards


def state_from_json(d: Any) -> EnvState:
    """An EnvState from a setState-style dict.

    Raises ValueError("state.<path>: <reason>") when invalid.
    """
    r = Reader(d, "state", STATE_KEYS)
    exit_pos = _parse_exit(r, NUM_CELLS - 1)
    board = _parse_board(r, exit_pos, is_snapshot=False)
    stage = r.read_int("stage", 1, 1, LAST_STAGE)
    interval = r.read_int("scheduledTaskInterval", 12, 4, 12)
    next_task = r.read_int("nextScheduledTaskTurn", interval)
    pending = r.read_int("pendingSiphonTransmissions", 0)
    step_active = r.read_bool("stepActive")
    seed = r.read_int("seed", 0, 0, U32_MAX)
    step_index = r.read_int("stepIndex", 0, 0, U32_MAX)
    won = r.read_bool("gameWon")
    if won and (stage != LAST_STAGE or int(board["hp"]) == 0):
        r.fail("gameWon", "requires stage 8 and player.hp >= 1")
    history = _parse_history(r, exit_pos)
    outcome = WON if won else (DIED if int(board["hp"]) == 0 else RUNNING)

    def i32(v: int) -> Any:
        return jnp.asarray(v, jnp.int32)

    state = EnvState(
        board=Board(**{name: jnp.asarray(v) for name, v in board.items()}),
        seed=jnp.asarray(seed, jnp.uint32),
        step_index=jnp.asarray(step_index, jnp.uint32),
        outcome=i32(outcome),
        stage=i32(stage),
        interval=i32(interval),
        next_task_turn=i32(next_task),
        pending=i32(pending),
        step_active=jnp.asarray(step_active),
        exit_pos=i32(exit_pos),
        history=stack_rows(history),
        history_count=i32(len(history)),
        history_start=i32(0),
    )
    if outcome == RUNNING and not bool(np.any(np.asarray(action_mask(state)))):
        raise ValueError("state: no legal action")
    return state


_EMPTY_BOARD = empty_board()
