"""The scenarios of game-rules.md §16 (and a few more hand-made situations) as
``setState`` starts plus actions, in the state schema of protocol.md §6.

Each scenario's start is the §16 "default state" modified as the scenario
lists; the schema's defaults already are that default state (seed 0,
stepIndex 0, stage 1, exit (5,5), interval 12, ...), so only the listed
changes are written here.
"""

from __future__ import annotations

from dataclasses import dataclass

from hackmatrix.names import ENEMY_MAX_HP, ENEMY_TYPES, SIPHON_ACTION, Program

# Action indices (protocol.md §4), short for the tables below; the programs in Program order.
UP, DOWN, LEFT, RIGHT, SIPHON = 0, 1, 2, 3, SIPHON_ACTION
(PUSH, PULL, CRASH, WARP, POLY, WAIT, DEBUG, ROW, COL, UNDO, STEP, SIPH_PLUS, EXCH, SHOW) = (
    p.action for p in Program if p <= Program.SHOW
)
(RESET, CALM, D_BOM, DELAY, ANTI_V, SCORE, REDUC, ATK_PLUS, HACK) = (
    p.action for p in Program if p >= Program.RESET
)


@dataclass(frozen=True)
class Scenario:
    name: str
    note: str
    state: dict | None  # None: start from reset(seed)
    actions: tuple[int, ...]
    seed: int | None = None


def player(row, col, **fields) -> dict:
    names = {"C": "credits", "E": "energy", "DS": "dataSiphons", "attack": "attackDamage"}
    return {"row": row, "col": col, **{names.get(k, k): v for k, v in fields.items()}}


# Short keywords for the spawn flags that enemies and transmissions both carry.
_SPAWN_FLAGS = {"fromSiphon": "spawnedFromSiphon", "fromScheduled": "isFromScheduledTask"}
_MAX_HP = dict(zip(ENEMY_TYPES, ENEMY_MAX_HP))


def _spawn_flags(flags: dict) -> dict:
    return {_SPAWN_FLAGS.get(k, k): v for k, v in flags.items()}


def enemy(kind, row, col, hp=None, **flags) -> dict:
    """An enemy at full hit points unless `hp` says otherwise."""
    entry = {"type": kind, "row": row, "col": col, "hp": hp if hp is not None else _MAX_HP[kind]}
    return {**entry, **_spawn_flags(flags)}


def tx(row, col, countdown, kind, **flags) -> dict:
    return {
        "row": row,
        "col": col,
        "turnsRemaining": countdown,
        "enemyType": kind,
        **_spawn_flags(flags),
    }


def data(row, col, points, spawn, siphoned=False) -> dict:
    return {
        "row": row,
        "col": col,
        "type": "data",
        "points": points,
        "spawnCount": spawn,
        "siphoned": siphoned,
    }


def program(row, col, name, spawn, siphoned=False) -> dict:
    return {
        "row": row,
        "col": col,
        "type": "program",
        "programType": name,
        "spawnCount": spawn,
        "siphoned": siphoned,
    }


def question(row, col, spawn, points=None, name=None) -> dict:
    block = {
        "row": row,
        "col": col,
        "type": "question",
        "isData": points is not None,
        "spawnCount": spawn,
    }
    block.update({"points": points} if points is not None else {"programType": name})
    return block


def res(row, col, **amounts) -> dict:
    return {"row": row, "col": col, **amounts}


def state(p: dict, *, owns=(), enemies=(), txs=(), blocks=(), resources=(), **top) -> dict:
    out = {
        "player": p,
        "ownedPrograms": sorted(owns),
        "enemies": list(enemies),
        "transmissions": list(txs),
        "blocks": list(blocks),
        "resources": list(resources),
    }
    out.update(top)
    return out


def sc(name, note, start, *actions) -> Scenario:
    return Scenario(name, note, start, tuple(actions))


_ROW1_BLOCKS = [data(1, c, 1, 1) for c in range(5)]

SCENARIOS: list[Scenario] = [
    sc("SC-01", "plain move", state(player(2, 2)), UP),
    sc(
        "SC-02a",
        "direction mask: block, enemy on a block, transmission",
        state(
            player(2, 2),
            blocks=[data(3, 2, 2, 2), data(2, 3, 2, 2)],
            enemies=[enemy("daemon", 2, 3)],
            txs=[tx(2, 1, 2, "virus")],
        ),
        RIGHT,
    ),
    sc("SC-02b", "direction mask in a corner", state(player(0, 0)), UP),
    sc(
        "SC-03",
        "attack at range; stun covers the phase",
        state(player(0, 3), enemies=[enemy("virus", 4, 3, 2)]),
        UP,
    ),
    sc(
        "SC-04",
        "a block stops the line of fire",
        state(player(0, 3), blocks=[data(2, 3, 5, 5)], enemies=[enemy("virus", 4, 3, 2)]),
        UP,
    ),
    sc(
        "SC-05",
        "transmission hit before an enemy",
        state(player(1, 1), txs=[tx(1, 3, 2, "daemon")], enemies=[enemy("daemon", 1, 5)]),
        RIGHT,
    ),
    sc(
        "SC-06",
        "kill an enemy standing on a block",
        state(
            player(0, 3, attack=2), blocks=[data(2, 3, 5, 5)], enemies=[enemy("glitch", 2, 3, 2)]
        ),
        UP,
    ),
    sc(
        "SC-07",
        "walking collects a data siphon, not credits",
        state(player(0, 1), resources=[res(0, 0, credits=2, dataSiphon=True)]),
        LEFT,
    ),
    sc(
        "SC-08",
        "stage completion and stage-2 generation",
        state(
            player(5, 4, hp=2, C=3),
            enemies=[enemy("daemon", 2, 2, 3, stunned=True)],
            txs=[tx(3, 3, 2, "virus")],
            stepIndex=5,
            turn=7,
            scheduledTaskInterval=9,
            nextScheduledTaskTurn=20,
            showActivated=True,
            scheduledTasksDisabled=True,
            atkPlusUsesThisStage=2,
            undoHistory=[
                {
                    "player": player(5, 3, hp=2, C=3),
                    "turn": 6,
                    "enemies": [enemy("daemon", 2, 1, 3)],
                    "transmissions": [tx(3, 3, 3, "virus")],
                }
            ],
        ),
        RIGHT,
    ),
    sc(
        "SC-09",
        "victory",
        state(player(4, 5, hp=1, score=20), enemies=[enemy("virus", 3, 3)], stage=8, stepIndex=40),
        UP,
    ),
    sc(
        "SC-10",
        "death",
        state(player(3, 3, hp=1, E=1), owns=[WAIT], enemies=[enemy("virus", 4, 3)]),
        WAIT,
    ),
    sc(
        "SC-11",
        "two attackers; death to a siphon enemy",
        state(
            player(3, 3, hp=2, E=1),
            owns=[WAIT],
            enemies=[enemy("daemon", 2, 3), enemy("virus", 5, 3, fromSiphon=True)],
        ),
        WAIT,
    ),
    sc(
        "SC-12",
        "draining a full cross",
        state(
            player(2, 2, DS=1),
            blocks=[data(3, 2, 4, 4), program(1, 2, "show", 2)],
            resources=[
                res(2, 1, credits=2),
                res(2, 3, energy=3),
                res(2, 2, credits=1),
                res(4, 4, energy=1),
            ],
        ),
        SIPHON,
    ),
    sc(
        "SC-13",
        "question block, owned program, siphoned cells, pending kept by STEP",
        state(
            player(2, 2, DS=2),
            owns=[PUSH],
            blocks=[
                question(3, 2, 5, points=5),
                program(1, 2, "push", 4),
                data(2, 1, 3, 0, siphoned=True),
            ],
            resources=[res(2, 3, energy=2)],
            cellFlags=[{"row": 2, "col": 3, "siphoned": True}],
            stepActive=True,
        ),
        SIPHON,
    ),
    sc(
        "SC-14",
        "tie-break: vertical first",
        state(player(1, 1, E=1), owns=[WAIT], enemies=[enemy("daemon", 3, 3)]),
        WAIT,
    ),
    sc(
        "SC-15",
        "detour around another enemy",
        state(
            player(0, 0, E=1), owns=[WAIT], enemies=[enemy("daemon", 0, 2), enemy("daemon", 0, 3)]
        ),
        WAIT,
    ),
    sc(
        "SC-16",
        "greedy fallback steps backwards",
        state(
            player(0, 0, E=1),
            owns=[WAIT],
            enemies=[enemy("daemon", 0, 2), enemy("daemon", 0, 3)],
            blocks=_ROW1_BLOCKS,
        ),
        WAIT,
    ),
    sc(
        "SC-17",
        "route 2 toward a transmission in the corridor",
        state(
            player(0, 0, E=1),
            owns=[WAIT],
            blocks=_ROW1_BLOCKS,
            txs=[tx(0, 1, 3, "virus")],
            enemies=[enemy("daemon", 0, 3)],
        ),
        WAIT,
    ),
    sc(
        "SC-18",
        "virus double move, then move + attack",
        state(player(0, 0, E=2), owns=[WAIT], enemies=[enemy("virus", 4, 0)]),
        WAIT,
        WAIT,
    ),
    sc(
        "SC-19",
        "glitch walks onto a block",
        state(
            player(0, 0, E=1),
            owns=[WAIT],
            blocks=[data(2, 0, 2, 2)],
            enemies=[enemy("glitch", 3, 0)],
        ),
        WAIT,
    ),
    sc(
        "SC-19b",
        "daemon goes round a block",
        state(
            player(0, 0, E=1),
            owns=[WAIT],
            blocks=[data(2, 0, 2, 2)],
            enemies=[enemy("daemon", 3, 0)],
        ),
        WAIT,
    ),
    sc(
        "SC-20",
        "cryptog last-known position",
        state(
            player(1, 1, E=1), owns=[WAIT], enemies=[enemy("cryptog", 2, 3), enemy("cryptog", 3, 4)]
        ),
        WAIT,
    ),
    sc(
        "SC-21",
        "a transmission completes",
        state(
            player(0, 0, E=1),
            owns=[WAIT],
            txs=[tx(4, 4, 1, "daemon", fromSiphon=True), tx(2, 5, 3, "glitch")],
        ),
        WAIT,
    ),
    sc(
        "SC-22",
        "scheduled task fires",
        state(
            player(0, 0, E=1),
            owns=[WAIT],
            blocks=[data(0, 2, 3, 3)],
            enemies=[enemy("daemon", 3, 0)],
            turn=11,
            nextScheduledTaskTurn=12,
        ),
        WAIT,
    ),
    sc(
        "SC-23",
        "STEP skips the enemy phase",
        state(
            player(0, 0, E=3),
            owns=[STEP],
            enemies=[enemy("daemon", 3, 3, stunned=True)],
            txs=[tx(5, 0, 1, "virus")],
        ),
        STEP,
        RIGHT,
    ),
    sc(
        "SC-24",
        "PUSH: claims, cancellations, cascade",
        state(
            player(2, 2, E=2),
            owns=[PUSH],
            enemies=[
                enemy("daemon", 3, 2),
                enemy("virus", 1, 4),
                enemy("glitch", 1, 5),
                enemy("daemon", 5, 5),
                enemy("cryptog", 4, 4),
                enemy("virus", 3, 3),
                enemy("daemon", 2, 1),
            ],
            txs=[tx(2, 0, 2, "virus")],
        ),
        PUSH,
    ),
    sc(
        "SC-25",
        "PULL",
        state(
            player(2, 2, E=2),
            owns=[PULL],
            enemies=[
                enemy("daemon", 4, 4),
                enemy("virus", 3, 3),
                enemy("glitch", 2, 5),
                enemy("daemon", 2, 1),
                enemy("virus", 0, 2),
            ],
        ),
        PULL,
    ),
    sc(
        "SC-26",
        "CRASH",
        state(
            player(2, 2, C=3, E=2),
            owns=[CRASH],
            blocks=[data(3, 1, 2, 2), program(3, 2, "row", 0, siphoned=True)],
            resources=[res(3, 1, energy=2), res(1, 1, credits=1)],
            enemies=[
                enemy("virus", 3, 3),
                enemy("glitch", 1, 3, fromScheduled=True),
                enemy("virus", 4, 2),
            ],
            txs=[tx(2, 1, 2, "daemon")],
        ),
        CRASH,
    ),
    sc(
        "SC-27",
        "WARP to a lone transmission on a data-siphon cell",
        state(
            player(0, 0, C=2, E=2),
            owns=[WARP],
            resources=[res(3, 3, dataSiphon=True)],
            txs=[tx(3, 3, 2, "virus")],
        ),
        WARP,
    ),
    sc(
        "SC-28",
        "WARP with a random target",
        state(
            player(0, 0, C=2, E=2),
            owns=[WARP],
            enemies=[enemy("daemon", 1, 1), enemy("virus", 4, 4)],
            txs=[tx(2, 5, 1, "glitch")],
        ),
        WARP,
    ),
    sc(
        "SC-29",
        "WARP onto the exit completes the stage",
        state(
            player(0, 0, hp=1, C=2, E=2), owns=[WARP], enemies=[enemy("virus", 5, 5)], stepIndex=3
        ),
        WARP,
    ),
    sc(
        "SC-30",
        "POLY",
        state(
            player(3, 3, C=1, E=1),
            owns=[POLY],
            enemies=[
                enemy("daemon", 0, 4, 1),
                enemy("virus", 3, 0, 2),
                enemy("cryptog", 4, 4, 1),
                enemy("glitch", 1, 2, 2, stunned=True),
            ],
        ),
        POLY,
    ),
    sc(
        "SC-31",
        "DEBUG",
        state(
            player(2, 2, C=3),
            owns=[DEBUG],
            blocks=[data(4, 4, 5, 5), data(1, 0, 2, 2)],
            enemies=[enemy("glitch", 4, 4), enemy("daemon", 1, 0), enemy("virus", 5, 3)],
        ),
        DEBUG,
    ),
    sc(
        "SC-32",
        "ROW",
        state(
            player(3, 3, C=3, E=1),
            owns=[ROW],
            blocks=[data(3, 4, 1, 1)],
            enemies=[enemy("virus", 3, 0, 1), enemy("daemon", 3, 5), enemy("virus", 4, 3)],
        ),
        ROW,
    ),
    sc(
        "SC-33",
        "COL with attack 2",
        state(
            player(3, 3, C=3, E=1, attack=2),
            owns=[COL],
            enemies=[enemy("daemon", 0, 3), enemy("virus", 5, 3), enemy("glitch", 3, 4)],
        ),
        COL,
    ),
    sc(
        "SC-34",
        "UNDO",
        state(
            player(2, 2, C=6, E=1),
            owns=[WAIT, SIPH_PLUS, UNDO],
            enemies=[enemy("daemon", 5, 2), enemy("virus", 0, 5, fromSiphon=True)],
        ),
        WAIT,
        SIPH_PLUS,
        UNDO,
    ),
    sc(
        "SC-35",
        "SIPH+",
        state(player(3, 3, C=5), owns=[SIPH_PLUS], enemies=[enemy("daemon", 5, 4)]),
        SIPH_PLUS,
    ),
    sc("SC-36", "EXCH", state(player(3, 3, C=8), owns=[EXCH]), EXCH),
    sc(
        "SC-37",
        "SHOW reveals a cryptog",
        state(player(3, 3, C=2), owns=[SHOW], enemies=[enemy("cryptog", 5, 5)]),
        SHOW,
    ),
    sc("SC-38", "RESET at hp 1", state(player(3, 3, hp=1, E=4), owns=[RESET]), RESET),
    sc(
        "SC-38b",
        "RESET at hp 2 (program waste)",
        state(player(3, 3, hp=2, E=4), owns=[RESET]),
        RESET,
    ),
    sc(
        "SC-39",
        "CALM freezes the schedule",
        state(player(0, 0, C=2, E=5), owns=[CALM, WAIT], turn=11),
        CALM,
        WAIT,
    ),
    sc(
        "SC-40",
        "D_BOM",
        state(
            player(2, 2, C=3, attack=3),
            owns=[D_BOM],
            enemies=[
                enemy("daemon", 4, 2),
                enemy("daemon", 2, 4),
                enemy("virus", 5, 3, 2),
                enemy("glitch", 3, 1, 1),
                enemy("daemon", 4, 3),
            ],
        ),
        D_BOM,
    ),
    sc(
        "SC-41",
        "DELAY",
        state(
            player(0, 0, C=1, E=2), owns=[DELAY], txs=[tx(3, 3, 1, "virus"), tx(4, 1, 2, "daemon")]
        ),
        DELAY,
    ),
    sc(
        "SC-42",
        "ANTI-V",
        state(
            player(3, 3, C=3, attack=3),
            owns=[ANTI_V],
            enemies=[enemy("virus", 4, 3, 1), enemy("virus", 5, 5, 2), enemy("daemon", 0, 0)],
        ),
        ANTI_V,
    ),
    sc("SC-43", "SCORE", state(player(3, 3, E=5, score=7), owns=[SCORE], stage=2), SCORE),
    sc(
        "SC-44",
        "REDUC",
        state(
            player(0, 0, C=2, E=1),
            owns=[REDUC],
            blocks=[
                data(1, 1, 3, 3),
                program(1, 2, "warp", 0),
                data(1, 3, 2, 0, siphoned=True),
                question(1, 4, 6, name="crash"),
            ],
        ),
        REDUC,
    ),
    sc(
        "SC-45",
        "ATK+ twice, then a new stage",
        state(player(5, 4, C=12, E=12), owns=[ATK_PLUS]),
        ATK_PLUS,
        ATK_PLUS,
        RIGHT,
    ),
    sc(
        "SC-46",
        "HACK",
        state(
            player(2, 2, C=2, E=2),
            owns=[HACK],
            blocks=[data(3, 2, 5, 0, siphoned=True), data(4, 4, 4, 4)],
            cellFlags=[{"row": 2, "col": 3, "siphoned": True}],
            enemies=[enemy("glitch", 3, 2, 1), enemy("daemon", 2, 3), enemy("glitch", 4, 4)],
        ),
        HACK,
    ),
    # Extra situations the issue asks for.
    sc(
        "X-undo-chain",
        "three enemy phases undone one by one",
        state(
            player(2, 2, C=10, E=5),
            owns=[WAIT, UNDO],
            enemies=[enemy("daemon", 5, 5), enemy("virus", 0, 5)],
        ),
        WAIT,
        WAIT,
        WAIT,
        UNDO,
        UNDO,
        UNDO,
    ),
    sc(
        "R1", "rewards.md R1: a step towards the exit, then one away", state(player(0, 0)), UP, DOWN
    ),
    sc("R2", "rewards.md R2: RESET at 2 HP", state(player(3, 3, hp=2, E=4), owns=[RESET]), RESET),
    sc(
        "R3",
        "rewards.md R3: a siphon from a dominated position",
        state(
            player(2, 2, DS=1),
            blocks=[data(2, 3, 3, 3)],
            resources=[
                res(1, 2, credits=1),
                res(2, 5, credits=3),
                res(3, 3, credits=1),
                res(4, 3, energy=2),
            ],
        ),
        SIPHON,
    ),
    sc(
        "R4",
        "rewards.md R4: a kill along a line of fire, then a hit",
        state(player(2, 2), enemies=[enemy("virus", 2, 5, 1), enemy("daemon", 1, 2, 3)]),
        RIGHT,
    ),
    sc(
        "R6",
        "rewards.md R6: the winning step",
        state(player(4, 5, hp=3, score=10, C=7, E=3), stage=8),
        UP,
    ),
    sc(
        "X-siphon-death",
        "rewards.md R7: killed by a siphon-spawned virus on stage 3",
        state(
            player(2, 2, hp=1, E=1),
            owns=[WAIT],
            enemies=[enemy("virus", 2, 3, fromSiphon=True)],
            stage=3,
        ),
        WAIT,
    ),
    sc(
        "X-stage-3-exit",
        "rewards.md R5: completing stage 3",
        state(player(4, 5, hp=2, C=20, E=10), stage=3),
        UP,
    ),
    sc(
        "X-cryptog-hidden-then-aligned",
        "a hidden cryptog walks into the player's column",
        state(player(0, 0, E=3), owns=[WAIT], enemies=[enemy("cryptog", 3, 1)]),
        WAIT,
        WAIT,
    ),
]

RESET_SCENARIOS = [
    Scenario("SC-47-seed-0", "reset(0) board", None, (), seed=0),
    Scenario("SC-47-seed-1", "reset(1) board", None, (), seed=1),
    Scenario("SC-47-seed-12345", "reset(12345) board", None, (), seed=12345),
]
