"""Pillow rendering of a game state to an RGB array.

Each cell has three bands: a label strip at the top (block contents, enemy
type), a glyph in the middle (the player, an enemy, a transmission, the exit
door, a data-siphon pickup, or the block's own colour) and a strip at the
bottom (resources on the left, hit points or countdown on the right). No text
is ever drawn over the middle of a cell, so the pixel at a cell's centre
always has the colour of the most important thing on it (see `PALETTE`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from hackmatrix.names import GRID_SIZE

from .fonts import font
from .panel import Panel, build_panel
from .scene import BlockView, CellView, EnemyView, Scene, TransmissionView, build_scene

Color = tuple[int, int, int]

PALETTE: dict[str, Color] = {
    "background": (15, 17, 26),
    "floor": (36, 40, 56),
    "floor_siphoned": (50, 44, 70),
    "grid_text": (130, 138, 160),
    "player": (246, 246, 246),
    "player_ring": (70, 215, 255),
    "virus": (232, 58, 72),
    "daemon": (255, 142, 28),
    "glitch": (118, 228, 62),
    "cryptog": (255, 104, 222),
    "stun_ring": (255, 240, 120),
    "transmission": (252, 226, 120),
    "transmission_ring": (190, 150, 50),
    "data": (44, 96, 210),
    "data_siphoned": (28, 54, 104),
    "program": (142, 62, 194),
    "program_siphoned": (78, 42, 104),
    "question": (112, 118, 142),
    "question_siphoned": (66, 70, 86),
    "exit_floor": (20, 72, 48),
    "exit": (64, 204, 112),
    "data_siphon": (0, 226, 204),
    "credits": (255, 204, 48),
    "energy": (96, 200, 255),
    "hp_full": (240, 70, 80),
    "hp_empty": (80, 60, 70),
    "siphon_center": (210, 170, 255),
    "text": (230, 232, 240),
    "text_dim": (120, 126, 146),
    "good": (110, 230, 130),
    "bad": (255, 96, 96),
    "panel": (24, 27, 40),
    "usable": (40, 110, 64),
    "unusable": (44, 46, 60),
    "valid_move": (110, 230, 130),
}

BLOCK_COLOR_KEYS = {"data": "data", "program": "program", "question": "question"}

# Base sizes at scale 1.0, in pixels.
_CELL = 88
_GAP = 4
_MARGIN_LEFT = 28
_MARGIN_TOP = 40
_MARGIN_BOTTOM = 30
_PANEL_WIDTH = 320
_FOOTER_LINE = 18
_MAX_REWARD_LINES = 8


@dataclass(frozen=True)
class Layout:
    """Pixel geometry of a frame at a given scale."""

    scale: float
    footer_lines: int = 0

    def px(self, value: float) -> int:
        return int(round(value * self.scale))

    @property
    def cell(self) -> int:
        return self.px(_CELL)

    @property
    def gap(self) -> int:
        return self.px(_GAP)

    @property
    def board_left(self) -> int:
        return self.px(_MARGIN_LEFT)

    @property
    def board_top(self) -> int:
        return self.px(_MARGIN_TOP)

    @property
    def board_size(self) -> int:
        return GRID_SIZE * self.cell + (GRID_SIZE - 1) * self.gap

    @property
    def panel_left(self) -> int:
        return self.board_left + self.board_size + self.px(20)

    @property
    def width(self) -> int:
        return self.panel_left + self.px(_PANEL_WIDTH)

    @property
    def footer_top(self) -> int:
        return self.board_top + self.board_size + self.px(_MARGIN_BOTTOM)

    @property
    def height(self) -> int:
        extra = self.px(_FOOTER_LINE) * self.footer_lines + (self.px(8) if self.footer_lines else 0)
        return self.footer_top + extra

    def cell_box(self, row: int, col: int) -> tuple[int, int, int, int]:
        """(left, top, right, bottom), inclusive; row 0 is drawn at the bottom."""
        left = self.board_left + col * (self.cell + self.gap)
        top = self.board_top + (GRID_SIZE - 1 - row) * (self.cell + self.gap)
        return left, top, left + self.cell - 1, top + self.cell - 1

    def cell_center(self, row: int, col: int) -> tuple[int, int]:
        """(x, y) of the pixel at the middle of a cell."""
        left, top, right, bottom = self.cell_box(row, col)
        return (left + right) // 2, (top + bottom) // 2


def render_rgb(
    state: dict,
    *,
    last_action: int | None = None,
    reward_components: Mapping[str, float] | None = None,
    reward: float | None = None,
    mask: Sequence[bool] | None = None,
    scale: float = 1.0,
    title: str | None = None,
    footer: Sequence[str] = (),
    reveal: bool = False,
) -> np.ndarray:
    """Draw `state` (a `getState`-schema dict) as an (H, W, 3) uint8 array.

    `mask` (28 booleans) highlights the usable programs and the valid moves;
    `last_action` and `reward_components` fill the "last step" part of the
    panel; `footer` lines (a key map, say) go under the board.
    """
    if not scale > 0:
        raise ValueError(f"scale must be positive, got {scale}")
    scene = build_scene(state, reveal=reveal)
    panel = build_panel(
        scene,
        last_action=last_action,
        reward_components=reward_components,
        reward=reward,
        mask=mask,
    )
    layout = Layout(scale=scale, footer_lines=len(footer))
    image = Image.new("RGB", (layout.width, layout.height), PALETTE["background"])
    draw = ImageDraw.Draw(image)
    _draw_title(draw, layout, scene, title)
    _draw_board(draw, layout, scene, panel)
    _draw_panel(draw, layout, panel)
    _draw_footer(draw, layout, footer)
    return np.asarray(image, dtype=np.uint8).copy()


# ----------------------------------------------------------------- board


def _draw_title(draw: ImageDraw.ImageDraw, layout: Layout, scene: Scene, title: str | None) -> None:
    text = (
        title
        if title is not None
        else f"HackMatrix  ·  stage {scene.stage}/8  ·  turn {scene.turn}"
    )
    draw.text(
        (layout.board_left, layout.px(10)),
        text,
        fill=PALETTE["text"],
        font=font(layout.px(18), bold=True),
    )


def _draw_board(draw: ImageDraw.ImageDraw, layout: Layout, scene: Scene, panel: Panel) -> None:
    label_font = font(layout.px(13))
    for i in range(GRID_SIZE):
        x, _ = layout.cell_center(0, i)
        draw.text(
            (x, layout.board_top + layout.board_size + layout.px(6)),
            str(i),
            fill=PALETTE["grid_text"],
            font=label_font,
            anchor="mt",
        )
        _, y = layout.cell_center(i, 0)
        draw.text(
            (layout.board_left - layout.px(10), y),
            str(i),
            fill=PALETTE["grid_text"],
            font=label_font,
            anchor="mm",
        )
    for row in range(GRID_SIZE):
        for col in range(GRID_SIZE):
            _draw_cell(draw, layout, scene.cell(row, col))
    if panel.basic_actions:
        _draw_valid_moves(draw, layout, scene, panel)


def _draw_cell(draw: ImageDraw.ImageDraw, layout: Layout, cell: CellView) -> None:
    left, top, right, bottom = layout.cell_box(cell.row, cell.col)
    cx, cy = layout.cell_center(cell.row, cell.col)
    s = layout.cell
    radius = layout.px(8)

    floor = (
        PALETTE["exit_floor"]
        if cell.is_exit
        else (PALETTE["floor_siphoned"] if cell.siphoned else PALETTE["floor"])
    )
    draw.rounded_rectangle((left, top, right, bottom), radius=radius, fill=floor)

    if cell.block is not None:
        b = cell.block
        key = BLOCK_COLOR_KEYS[b.kind] + ("_siphoned" if b.siphoned else "")
        inset = layout.px(4)
        draw.rounded_rectangle(
            (left + inset, top + inset, right - inset, bottom - inset),
            radius=radius,
            fill=PALETTE[key],
        )
        _draw_block_labels(draw, layout, cell, b, left, top, right, bottom)

    glyph = s * 0.22  # half-size of the middle glyph
    if cell.is_exit:
        w, h = glyph * 0.8, glyph * 1.1
        draw.rounded_rectangle(
            (cx - w, cy - h, cx + w, cy + h), radius=layout.px(3), fill=PALETTE["exit"]
        )
        _small_text(
            draw,
            layout,
            (cx, bottom - layout.px(4)),
            "EXIT",
            PALETTE["exit"],
            anchor="mb",
            bold=True,
        )
    if cell.is_data_siphon:
        d = glyph * 0.9
        draw.polygon(
            [(cx, cy - d), (cx + d, cy), (cx, cy + d), (cx - d, cy)], fill=PALETTE["data_siphon"]
        )
    if cell.siphon_center:
        dot = layout.px(5)
        draw.ellipse(
            (
                right - layout.px(8) - dot,
                top + layout.px(8) - dot,
                right - layout.px(8) + dot,
                top + layout.px(8) + dot,
            ),
            outline=PALETTE["siphon_center"],
            width=max(1, layout.px(2)),
        )
    _draw_resources(draw, layout, cell, left, bottom)

    if cell.cryptog_hint and cell.enemy is None and not cell.has_player:
        r = glyph * 1.05
        faint = _blend(PALETTE["cryptog"], floor, 0.45)
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=faint, width=max(1, layout.px(2)))
        _small_text(
            draw,
            layout,
            (right - layout.px(5), top + layout.px(4)),
            "last seen",
            faint,
            anchor="ra",
        )

    if cell.transmission is not None:
        _draw_transmission(draw, layout, cell.transmission, cx, cy, glyph, right, bottom, top)
    if cell.enemy is not None:
        _draw_enemy(draw, layout, cell, cell.enemy, cx, cy, glyph, right, bottom, top)
    if cell.has_player:
        r = glyph * 1.1
        ring = max(2, layout.px(4))
        draw.ellipse(
            (cx - r - ring, cy - r - ring, cx + r + ring, cy + r + ring),
            fill=PALETTE["player_ring"],
        )
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=PALETTE["player"])


def _draw_block_labels(
    draw, layout: Layout, cell: CellView, b: BlockView, left, top, right, bottom
) -> None:
    x = left + layout.px(8)
    y = top + layout.px(6)
    if b.kind == "question" and b.points is None and b.program is None:
        draw.text(
            (x, y - layout.px(2)), "?", fill=PALETTE["text"], font=font(layout.px(17), bold=True)
        )
    elif b.points is not None:
        prefix = "?" if b.kind == "question" else ""
        draw.text(
            (x, y - layout.px(2)),
            f"{prefix}{b.points}",
            fill=PALETTE["text"],
            font=font(layout.px(17), bold=True),
        )
        if cell.enemy is None:  # the enemy's name takes that space otherwise
            _small_text(
                draw, layout, (x + layout.px(22), y + layout.px(3)), "data", PALETTE["text"]
            )
    else:
        prefix = "?" if b.kind == "question" else ""
        draw.text(
            (x, y),
            f"{prefix}{b.program}",
            fill=PALETTE["text"],
            font=font(layout.px(13), bold=True),
        )
    if b.siphoned:
        _small_text(
            draw,
            layout,
            (right - layout.px(7), bottom - layout.px(5)),
            "siphoned",
            PALETTE["text_dim"],
            anchor="rb",
        )
    elif b.spawn_count is not None and cell.enemy is None and cell.transmission is None:
        _small_text(
            draw,
            layout,
            (right - layout.px(7), bottom - layout.px(5)),
            f"spawn {b.spawn_count}",
            PALETTE["text_dim"],
            anchor="rb",
        )


def _draw_resources(draw, layout: Layout, cell: CellView, left, bottom) -> None:
    x, y = left + layout.px(7), bottom - layout.px(5)
    if cell.credits:
        _small_text(
            draw,
            layout,
            (x, y),
            f"{cell.credits}C",
            PALETTE["credits"],
            anchor="lb",
            bold=True,
            size=13,
        )
    if cell.energy:
        _small_text(
            draw,
            layout,
            (x, y),
            f"{cell.energy}E",
            PALETTE["energy"],
            anchor="lb",
            bold=True,
            size=13,
        )


def _draw_transmission(
    draw, layout: Layout, t: TransmissionView, cx, cy, glyph, right, bottom, top
) -> None:
    r = glyph * 0.95
    ring = max(2, layout.px(4))
    ring_color = PALETTE[t.enemy_type] if t.enemy_type else PALETTE["transmission_ring"]
    draw.ellipse((cx - r - ring, cy - r - ring, cx + r + ring, cy + r + ring), fill=ring_color)
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=PALETTE["transmission"])
    _small_text(
        draw,
        layout,
        (right - layout.px(7), bottom - layout.px(4)),
        f"in {t.countdown}",
        PALETTE["transmission"],
        anchor="rb",
        bold=True,
        size=13,
    )
    label = f"→ {t.enemy_type}" if t.enemy_type else "incoming"
    _small_text(
        draw, layout, (right - layout.px(7), top + layout.px(5)), label, ring_color, anchor="ra"
    )


def _draw_enemy(
    draw, layout: Layout, cell: CellView, e: EnemyView, cx, cy, glyph, right, bottom, top
) -> None:
    color = PALETTE[e.type]
    r = glyph * 1.1
    if e.stunned:
        ring = r + max(3, layout.px(6))
        draw.ellipse((cx - ring, cy - ring, cx + ring, cy + ring), fill=PALETTE["stun_ring"])
    if e.type == "virus":
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=color)
    elif e.type == "daemon":
        draw.rounded_rectangle(
            (cx - r * 0.9, cy - r * 0.9, cx + r * 0.9, cy + r * 0.9),
            radius=layout.px(4),
            fill=color,
        )
    elif e.type == "glitch":
        draw.polygon(
            [(cx, cy - r * 1.15), (cx + r * 1.15, cy), (cx, cy + r * 1.15), (cx - r * 1.15, cy)],
            fill=color,
        )
    else:  # cryptog
        draw.regular_polygon((cx, cy, r * 1.1), n_sides=6, fill=color)
    # On a block the top strip holds the block's label; shape and colour still tell the type.
    if cell.block is None:
        name = e.type + (" (stun)" if e.stunned else "")
        _small_text(
            draw,
            layout,
            (right - layout.px(6), top + layout.px(5)),
            name,
            color,
            anchor="ra",
            bold=True,
        )
    # hit points as pips, bottom right
    pip, step = layout.px(7), layout.px(10)
    x = right - layout.px(8) - step * (e.max_hp - 1) - pip
    y = bottom - layout.px(6) - pip
    for i in range(e.max_hp):
        fill = PALETTE["hp_full"] if i < e.hp else PALETTE["hp_empty"]
        draw.rectangle((x + i * step, y, x + i * step + pip, y + pip), fill=fill)


def _draw_valid_moves(draw, layout: Layout, scene: Scene, panel: Panel) -> None:
    """Small arrows on the player's cell edges for the valid directions."""
    left, top, right, bottom = layout.cell_box(scene.player.row, scene.player.col)
    cx, cy = layout.cell_center(scene.player.row, scene.player.col)
    a = layout.px(6)
    m = layout.px(3)
    arrows = {
        "up": [(cx - a, top + m + a), (cx + a, top + m + a), (cx, top + m)],
        "down": [(cx - a, bottom - m - a), (cx + a, bottom - m - a), (cx, bottom - m)],
        "left": [(left + m + a, cy - a), (left + m + a, cy + a), (left + m, cy)],
        "right": [(right - m - a, cy - a), (right - m - a, cy + a), (right - m, cy)],
    }
    for name, ok in panel.basic_actions:
        if ok and name in arrows:
            draw.polygon(arrows[name], fill=PALETTE["valid_move"])


# ----------------------------------------------------------------- panel


def _draw_panel(draw: ImageDraw.ImageDraw, layout: Layout, panel: Panel) -> None:
    x0 = layout.panel_left
    x1 = layout.width - layout.px(12)
    draw.rounded_rectangle(
        (x0, layout.board_top, x1, layout.board_top + layout.board_size),
        radius=layout.px(10),
        fill=PALETTE["panel"],
    )
    x = x0 + layout.px(14)
    y = layout.board_top + layout.px(12)
    label_font, value_font = font(layout.px(14)), font(layout.px(15), bold=True)
    line = layout.px(21)

    # Stats in two columns.
    col_width = (x1 - x) // 2
    for i, (label, value) in enumerate(panel.stats):
        cx = x + (i % 2) * col_width
        cy = y + (i // 2) * line
        draw.text((cx, cy), label, fill=PALETTE["text_dim"], font=label_font)
        color = PALETTE["hp_full"] if label == "HP" else PALETTE["text"]
        draw.text((cx + layout.px(66), cy), value, fill=color, font=value_font)
    y += ((len(panel.stats) + 1) // 2) * line + layout.px(4)

    if panel.flags:
        text = "   ".join(panel.flags)
        color = PALETTE["bad"] if "GAME OVER" in panel.flags else PALETTE["good"]
        draw.text((x, y), text, fill=color, font=font(layout.px(14), bold=True))
        y += line

    if panel.basic_actions:
        draw.text((x, y), "Moves", fill=PALETTE["text_dim"], font=label_font)
        mx = x + layout.px(66)
        for name, ok in panel.basic_actions:
            color = PALETTE["good"] if ok else PALETTE["text_dim"]
            draw.text((mx, y), name, fill=color, font=font(layout.px(13), bold=ok))
            mx += int(draw.textlength(name, font=font(layout.px(13), bold=ok))) + layout.px(7)
        y += line

    draw.text((x, y), "Programs", fill=PALETTE["text_dim"], font=label_font)
    y += line
    y = _draw_programs(draw, layout, panel, x, y, x1)

    y += layout.px(6)
    if panel.last_action is not None:
        draw.text((x, y), "Last", fill=PALETTE["text_dim"], font=label_font)
        draw.text((x + layout.px(66), y), panel.last_action, fill=PALETTE["text"], font=value_font)
        y += line
    if panel.reward_total is not None:
        draw.text((x, y), "Reward", fill=PALETTE["text_dim"], font=label_font)
        color = PALETTE["good"] if panel.reward_total >= 0 else PALETTE["bad"]
        draw.text((x + layout.px(66), y), f"{panel.reward_total:+.3f}", fill=color, font=value_font)
        y += line
        small = font(layout.px(12))
        room = (layout.board_top + layout.board_size - layout.px(8) - y) // layout.px(
            16
        )  # lines that fit
        limit = min(_MAX_REWARD_LINES, room if len(panel.reward_lines) <= room else room - 1)
        shown = panel.reward_lines[: max(0, limit)]
        for item in shown:
            color = PALETTE["good"] if item.value >= 0 else PALETTE["bad"]
            draw.text((x + layout.px(8), y), item.name, fill=PALETTE["text_dim"], font=small)
            draw.text(
                (x1 - layout.px(12), y), f"{item.value:+.3f}", fill=color, font=small, anchor="ra"
            )
            y += layout.px(16)
        if len(panel.reward_lines) > len(shown):
            draw.text(
                (x + layout.px(8), y),
                f"+{len(panel.reward_lines) - len(shown)} more",
                fill=PALETTE["text_dim"],
                font=small,
            )


def _draw_programs(draw, layout: Layout, panel: Panel, x: int, y: int, x1: int) -> int:
    if not panel.programs:
        draw.text((x + layout.px(8), y), "none", fill=PALETTE["text_dim"], font=font(layout.px(13)))
        return y + layout.px(20)
    cols = 2
    width = (x1 - x - layout.px(10)) // cols
    h = layout.px(19)
    name_font = font(layout.px(13), bold=True)
    cost_font = font(layout.px(11))
    for i, prog in enumerate(panel.programs):
        px_ = x + (i % cols) * (width + layout.px(6))
        py = y + (i // cols) * (h + layout.px(3))
        if prog.usable is None:
            bg, fg = PALETTE["unusable"], PALETTE["text"]
        elif prog.usable:
            bg, fg = PALETTE["usable"], PALETTE["text"]
        else:
            bg, fg = PALETTE["unusable"], PALETTE["text_dim"]
        draw.rounded_rectangle((px_, py, px_ + width, py + h), radius=layout.px(4), fill=bg)
        draw.text(
            (px_ + layout.px(6), py + h // 2), prog.name, fill=fg, font=name_font, anchor="lm"
        )
        draw.text(
            (px_ + width - layout.px(5), py + h // 2),
            f"{prog.credits}C {prog.energy}E",
            fill=PALETTE["text_dim"] if not prog.usable else PALETTE["text"],
            font=cost_font,
            anchor="rm",
        )
    rows = (len(panel.programs) + cols - 1) // cols
    return y + rows * (h + layout.px(3))


def _draw_footer(draw: ImageDraw.ImageDraw, layout: Layout, footer: Sequence[str]) -> None:
    y = layout.footer_top
    for text in footer:
        draw.text((layout.board_left, y), text, fill=PALETTE["text_dim"], font=font(layout.px(13)))
        y += layout.px(_FOOTER_LINE)


# ----------------------------------------------------------------- helpers


def _small_text(
    draw,
    layout: Layout,
    xy,
    text: str,
    color: Color,
    *,
    anchor: str = "la",
    bold: bool = False,
    size: int = 11,
) -> None:
    draw.text(xy, text, fill=color, font=font(layout.px(size), bold=bold), anchor=anchor)


def _blend(a: Color, b: Color, t: float) -> Color:
    return tuple(int(round(a[i] * t + b[i] * (1 - t))) for i in range(3))  # type: ignore[return-value]
