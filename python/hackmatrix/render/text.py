"""Terminal rendering of a game state: a 6x6 grid (row 0 at the bottom) and a panel."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hackmatrix.names import GRID_SIZE

from .panel import Panel, build_panel
from .scene import CellView, Scene, build_scene

CELL_WIDTH = 9

ENEMY_LETTERS = {"virus": "V", "daemon": "D", "glitch": "G", "cryptog": "C"}

# ANSI SGR codes, used only when colour is asked for.
_ANSI = {
    "player": "1;97",
    "virus": "1;91",
    "daemon": "1;95",
    "glitch": "1;92",
    "cryptog": "1;96",
    "transmission": "33",
    "data": "94",
    "program": "35",
    "question": "93",
    "exit": "1;32",
    "siphon": "36",
    "resource": "33",
    "hint": "2;36",
    "dim": "2",
    "good": "32",
    "bad": "31",
    "title": "1",
}

LEGEND = (
    "@ you   V/D/G/C virus/daemon/glitch/cryptog + hp (* stunned)   tN transmission in N turns\n"
    "#n data block (n points)   program name = program block   ? question block   ~ siphoned\n"
    "EX exit   $ data siphon   cN/eN credits/energy   c? last seen hidden cryptog"
)


def render_text(
    state: dict,
    *,
    last_action: int | None = None,
    reward_components: Mapping[str, float] | None = None,
    reward: float | None = None,
    mask: Sequence[bool] | None = None,
    color: bool = False,
    legend: bool = False,
    reveal: bool = False,
) -> str:
    """The state as text: the grid, then the panel (stats, programs, last step).

    Plain text by default; `color=True` adds ANSI colours.
    """
    scene = build_scene(state, reveal=reveal)
    panel = build_panel(
        scene,
        last_action=last_action,
        reward_components=reward_components,
        reward=reward,
        mask=mask,
    )
    paint = _painter(color)
    lines = _grid_lines(scene, paint)
    if legend:
        lines += ["", *LEGEND.splitlines()]
    lines += ["", *_panel_lines(scene, panel, paint)]
    return "\n".join(lines)


def _painter(color: bool):
    def paint(text: str, style: str) -> str:
        if not color or style not in _ANSI:
            return text
        return f"\x1b[{_ANSI[style]}m{text}\x1b[0m"

    return paint


def _grid_lines(scene: Scene, paint) -> list[str]:
    header = "   " + "".join(f"{c:^{CELL_WIDTH}}" for c in range(GRID_SIZE))
    border = "   +" + "+".join("-" * (CELL_WIDTH - 1) for _ in range(GRID_SIZE)) + "+"
    lines = [header, border]
    for row in reversed(range(GRID_SIZE)):  # row 0 is the bottom
        parts = [_cell_token(scene.cell(row, col), paint) for col in range(GRID_SIZE)]
        lines.append(f"{row}  |" + "|".join(parts) + "|")
        lines.append(border)
    return lines


def _cell_token(cell: CellView, paint) -> str:
    """The cell in CELL_WIDTH - 1 characters: what stands on it, then the floor."""
    pieces: list[tuple[str, str]] = []
    if cell.has_player:
        pieces.append(("@", "player"))
    if cell.enemy is not None:
        e = cell.enemy
        pieces.append((f"{ENEMY_LETTERS[e.type]}{e.hp}{'*' if e.stunned else ''}", e.type))
    if cell.transmission is not None:
        t = cell.transmission
        incoming = "" if t.enemy_type is None else ENEMY_LETTERS[t.enemy_type].lower()
        pieces.append((f"t{t.countdown}{incoming}", "transmission"))
    if cell.block is not None:
        b = cell.block
        mark = "~" if b.siphoned else ""
        if b.kind == "question":
            label = "?"
        elif b.points is not None:
            label = f"#{b.points}"
        else:
            label = b.program or "prog"
        pieces.append((mark + label, b.kind))
    if cell.is_exit:
        pieces.append(("EX", "exit"))
    if cell.is_data_siphon:
        pieces.append(("$", "siphon"))
    if cell.credits:
        pieces.append((f"c{cell.credits}", "resource"))
    if cell.energy:
        pieces.append((f"e{cell.energy}", "resource"))
    if cell.cryptog_hint and cell.enemy is None:
        pieces.append(("c?", "hint"))

    width = CELL_WIDTH - 1
    plain: list[str] = []
    painted: list[str] = []
    used = 0
    for text, style in pieces:
        extra = len(text) + (1 if plain else 0)
        if used + extra > width:
            break
        plain.append(text)
        painted.append(paint(text, style))
        used += extra
    if not plain and cell.siphoned:
        plain, painted, used = ["~"], [paint("~", "dim")], 1
    if not plain:
        plain, painted, used = ["."], [paint(".", "dim")], 1
    body = " ".join(painted)
    left = (width - used) // 2
    return " " * left + body + " " * (width - used - left)


def _panel_lines(scene: Scene, panel: Panel, paint) -> list[str]:
    lines = [paint(f"Stage {scene.stage}  Turn {scene.turn}", "title")]
    lines.append("  ".join(f"{label}: {value}" for label, value in panel.stats[:6]))
    if panel.flags:
        lines.append(
            "  ".join(paint(f, "bad" if f == "GAME OVER" else "good") for f in panel.flags)
        )

    if panel.programs:
        names = []
        for prog in panel.programs:
            label = f"{prog.name}({prog.action})"
            if prog.usable is True:
                label = paint("[" + label + "]", "good")
            elif prog.usable is False:
                label = paint(label, "dim")
            names.append(label)
        lines.append("Programs: " + " ".join(names))
    else:
        lines.append("Programs: none")
    if panel.basic_actions:
        valid = [name for name, ok in panel.basic_actions if ok]
        lines.append("Valid moves: " + (" ".join(valid) if valid else "none"))

    details = _detail_lines(scene)
    if details:
        lines += details

    if panel.last_action is not None:
        lines.append(f"Last action: {panel.last_action}")
    if panel.reward_total is not None:
        lines.append(f"Reward: {panel.reward_total:+.4f}")
        for item in panel.reward_lines:
            lines.append(f"  {item.name:<22}{item.value:+.4f}")
    return lines


def _detail_lines(scene: Scene) -> list[str]:
    lines = []
    for row, col, e in scene.enemies:
        extra = (", stunned" if e.stunned else "") + (", from siphon" if e.from_siphon else "")
        lines.append(f"  {e.type} at ({row},{col}) hp {e.hp}/{e.max_hp}{extra}")
    for r in range(GRID_SIZE):
        for c in range(GRID_SIZE):
            cell = scene.cell(r, c)
            if cell.transmission is not None:
                t = cell.transmission
                kind = f" ({t.enemy_type})" if t.enemy_type else ""
                lines.append(f"  transmission at ({r},{c}) spawns in {t.countdown}{kind}")
            if cell.cryptog_hint:
                lines.append(f"  hidden cryptog last seen at ({r},{c})")
    return lines
