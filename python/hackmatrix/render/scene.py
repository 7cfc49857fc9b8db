"""What a player can see of a game state: the single input of every renderer.

`build_scene` reads a state in the `getState` schema (protocol.md §6; both
engines produce it: the Swift CLI's `getState` and the JAX engine's
`state_to_json`) and applies the visibility rules of observation.md §5.2 and
game-rules.md §12, so the image and text renderers never see anything the
agent could not:

* a cryptog that is neither in the player's row or column nor revealed by
  SHOW is left out; its last known cell gets a hint instead;
* a question block shows only that it is one (and its siphoned mark);
* credits and energy under an unsiphoned block are not shown;
* a transmission's incoming enemy type is shown only while SHOW is active.

Fields left out of the state take the schema's defaults, so hand-written
states (tests, the examples of the spec) render as the engines would load
them. `reveal=True` switches the hiding off, for debugging.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hackmatrix.names import ENEMY_TYPES, GRID_SIZE

from .names import ENEMY_MAX_HP, program_name_of_block


@dataclass(frozen=True)
class EnemyView:
    type: str
    hp: int
    max_hp: int
    stunned: bool
    from_siphon: bool


@dataclass(frozen=True)
class BlockView:
    kind: str  # "data", "program" or "question"
    siphoned: bool
    points: int | None  # data blocks (and revealed data-hiding question blocks)
    program: str | None  # program blocks (and revealed program-hiding question blocks)
    spawn_count: int | None  # None where the observation hides it (question blocks)


@dataclass(frozen=True)
class TransmissionView:
    countdown: int
    enemy_type: str | None  # None unless SHOW is active (or reveal)


@dataclass
class CellView:
    row: int
    col: int
    is_exit: bool = False
    is_data_siphon: bool = False
    siphoned: bool = False
    siphon_center: bool = False
    has_player: bool = False
    block: BlockView | None = None
    enemy: EnemyView | None = None
    transmission: TransmissionView | None = None
    credits: int = 0  # visible amounts only
    energy: int = 0
    cryptog_hint: bool = False  # a hidden cryptog was last seen here


@dataclass(frozen=True)
class PlayerView:
    row: int
    col: int
    hp: int
    credits: int
    energy: int
    data_siphons: int
    attack: int
    score: int


@dataclass
class Scene:
    player: PlayerView
    cells: list[list[CellView]]  # cells[row][col], row 0 = bottom
    stage: int
    turn: int
    show_active: bool
    calm_active: bool
    owned_programs: list[int]  # action indices, ascending
    outcome: str  # "running", "won" or "died"
    hidden_cryptogs: int
    enemies: list[tuple[int, int, EnemyView]] = field(
        default_factory=list
    )  # visible ones, (row, col, view)

    def cell(self, row: int, col: int) -> CellView:
        return self.cells[row][col]


def build_scene(state: dict, *, reveal: bool = False) -> Scene:
    """The visible content of `state` (a `getState`-schema dict)."""
    if not isinstance(state, dict):
        raise TypeError(f"state must be a dict in the getState schema, got {type(state).__name__}")
    if "player" not in state or not isinstance(state["player"], dict):
        raise ValueError("state.player: required object is missing")
    p = state["player"]
    player = PlayerView(
        row=_position(p, "row", "state.player"),
        col=_position(p, "col", "state.player"),
        hp=_int(p, "hp", 3, "state.player"),
        credits=_int(p, "credits", 0, "state.player"),
        energy=_int(p, "energy", 0, "state.player"),
        data_siphons=_int(p, "dataSiphons", 0, "state.player"),
        attack=_int(p, "attackDamage", 1, "state.player"),
        score=_int(p, "score", 0, "state.player"),
    )
    show = bool(state.get("showActivated", False))
    cells = [[CellView(row=r, col=c) for c in range(GRID_SIZE)] for r in range(GRID_SIZE)]

    exit_cell = state.get("exit") or {"row": 5, "col": 5}
    cells[_position(exit_cell, "row", "state.exit")][
        _position(exit_cell, "col", "state.exit")
    ].is_exit = True

    for i, flags in enumerate(state.get("cellFlags", []) or []):
        where = f"state.cellFlags[{i}]"
        cell = cells[_position(flags, "row", where)][_position(flags, "col", where)]
        cell.siphoned |= bool(flags.get("siphoned", False))
        cell.siphon_center |= bool(flags.get("siphonCenter", False))

    for i, block in enumerate(state.get("blocks", []) or []):
        where = f"state.blocks[{i}]"
        cell = cells[_position(block, "row", where)][_position(block, "col", where)]
        cell.siphoned |= bool(block.get("siphoned", False))
        cell.block = _block_view(block, where, reveal)

    for i, res in enumerate(state.get("resources", []) or []):
        where = f"state.resources[{i}]"
        cell = cells[_position(res, "row", where)][_position(res, "col", where)]
        cell.is_data_siphon = bool(res.get("dataSiphon", False))
        cell.credits = _int(res, "credits", 0, where)
        cell.energy = _int(res, "energy", 0, where)

    # Resources under an unsiphoned block stay hidden (observation.md §5.2).
    if not reveal:
        for cell_row in cells:
            for cell in cell_row:
                if cell.block is not None and not cell.siphoned:
                    cell.credits = cell.energy = 0

    for i, tx in enumerate(state.get("transmissions", []) or []):
        where = f"state.transmissions[{i}]"
        cell = cells[_position(tx, "row", where)][_position(tx, "col", where)]
        if cell.transmission is None:  # the first one on a cell is the one shown
            incoming = _enemy_type(tx, "enemyType", where)
            cell.transmission = TransmissionView(
                countdown=_int(tx, "turnsRemaining", 1, where),
                enemy_type=incoming if (show or reveal) else None,
            )

    visible_enemies: list[tuple[int, int, EnemyView]] = []
    hidden = 0
    for i, enemy in enumerate(state.get("enemies", []) or []):
        where = f"state.enemies[{i}]"
        row, col = _position(enemy, "row", where), _position(enemy, "col", where)
        cell = cells[row][col]
        if cell.enemy is not None:  # only the first enemy on a cell counts
            continue
        kind = _enemy_type(enemy, "type", where)
        aligned = row == player.row or col == player.col
        if kind == "cryptog" and not (aligned or show or reveal):
            hidden += 1
            hint = _last_known(enemy, row, col, where)
            if hint is not None:
                cells[hint[0]][hint[1]].cryptog_hint = True
            continue
        view = EnemyView(
            type=kind,
            hp=_int(enemy, "hp", 1, where),
            max_hp=ENEMY_MAX_HP[kind],
            stunned=bool(enemy.get("stunned", False)),
            from_siphon=bool(enemy.get("spawnedFromSiphon", False)),
        )
        cell.enemy = view
        visible_enemies.append((row, col, view))

    cells[player.row][player.col].has_player = True

    if state.get("gameWon", False):
        outcome = "won"
    elif player.hp <= 0:
        outcome = "died"
    else:
        outcome = "running"

    owned = sorted({int(a) for a in state.get("ownedPrograms", []) or []})
    return Scene(
        player=player,
        cells=cells,
        stage=_int(state, "stage", 1, "state"),
        turn=_int(state, "turn", 0, "state"),
        show_active=show,
        calm_active=bool(state.get("scheduledTasksDisabled", False)),
        owned_programs=owned,
        outcome=outcome,
        hidden_cryptogs=hidden,
        enemies=visible_enemies,
    )


def _block_view(block: dict, where: str, reveal: bool) -> BlockView:
    kind = str(block.get("type", "")).lower()
    if kind not in ("data", "program", "question"):
        raise ValueError(f"{where}.type: unknown block type {block.get('type')!r}")
    siphoned = bool(block.get("siphoned", False))
    if kind == "question" and not reveal:
        return BlockView(
            kind="question", siphoned=siphoned, points=None, program=None, spawn_count=None
        )
    holds_data = kind == "data" or (kind == "question" and bool(block.get("isData", False)))
    if holds_data:
        points = _int(block, "points", 5, where)
        return BlockView(
            kind=kind,
            siphoned=siphoned,
            points=points,
            program=None,
            spawn_count=_int(block, "spawnCount", points, where),
        )
    return BlockView(
        kind=kind,
        siphoned=siphoned,
        points=None,
        program=program_name_of_block(block),
        spawn_count=_int(block, "spawnCount", 2, where),
    )


def _last_known(enemy: dict, row: int, col: int, where: str) -> tuple[int, int] | None:
    # Absent means "its own position" (the schema default); explicit nulls mean none.
    if "lastKnownRow" not in enemy and "lastKnownCol" not in enemy:
        return row, col
    if enemy.get("lastKnownRow") is None or enemy.get("lastKnownCol") is None:
        return None
    return _position(enemy, "lastKnownRow", where), _position(enemy, "lastKnownCol", where)


def _enemy_type(obj: dict, key: str, where: str) -> str:
    kind = str(obj.get(key, "")).lower()
    if kind not in ENEMY_TYPES:
        raise ValueError(f"{where}.{key}: unknown enemy type {obj.get(key)!r}")
    return kind


def _int(obj: dict, key: str, default: int, where: str) -> int:
    value = obj.get(key, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise ValueError(f"{where}.{key}: expected an integer, got {value!r}")
    return int(value)


def _position(obj: dict, key: str, where: str) -> int:
    if not isinstance(obj, dict) or key not in obj:
        raise ValueError(f"{where}.{key}: required position is missing")
    value = _int(obj, key, 0, where)
    if not 0 <= value < GRID_SIZE:
        raise ValueError(f"{where}.{key}: {value} is outside 0..{GRID_SIZE - 1}")
    return value
