"""The side-panel content shared by the image and text renderers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hackmatrix.names import (
    ACTION_COUNT,
    DIRECTION_NAMES,
    FIRST_PROGRAM_ACTION,
    PROGRAM_COSTS,
    REWARD_COMPONENT_NAMES,
    action_name,
)

from .scene import Scene

LAST_STAGE = 8
MAX_HP = 3


@dataclass(frozen=True)
class ProgramEntry:
    action: int
    name: str
    credits: int
    energy: int
    usable: bool | None  # None when no mask was given


@dataclass(frozen=True)
class RewardLine:
    name: str
    value: float


@dataclass(frozen=True)
class Panel:
    stats: list[tuple[str, str]]  # (label, value) rows
    flags: list[str]  # "SHOW active", "CALM active", "GAME WON", ...
    programs: list[ProgramEntry]
    basic_actions: list[tuple[str, bool]]  # (name, valid) for moves and siphon, only with a mask
    last_action: str | None
    reward_total: float | None
    reward_lines: list[RewardLine]  # the non-zero components, canonical order


def check_mask(mask: Sequence[bool] | None) -> list[bool] | None:
    if mask is None:
        return None
    values = [bool(v) for v in list(mask)]
    if len(values) != ACTION_COUNT:
        raise ValueError(f"mask must have {ACTION_COUNT} entries, got {len(values)}")
    return values


def build_panel(
    scene: Scene,
    *,
    last_action: int | None = None,
    reward_components: Mapping[str, float] | None = None,
    reward: float | None = None,
    mask: Sequence[bool] | None = None,
) -> Panel:
    mask = check_mask(mask)
    p = scene.player
    stats = [
        ("HP", f"{p.hp}/{MAX_HP}"),
        ("Credits", str(p.credits)),
        ("Energy", str(p.energy)),
        ("Siphons", str(p.data_siphons)),
        ("Score", str(p.score)),
        ("Attack", str(p.attack)),
        ("Stage", f"{scene.stage}/{LAST_STAGE}"),
        ("Turn", str(scene.turn)),
    ]
    flags = []
    if scene.show_active:
        flags.append("SHOW active")
    if scene.calm_active:
        flags.append("CALM active")
    if scene.outcome == "won":
        flags.append("GAME WON")
    elif scene.outcome == "died":
        flags.append("GAME OVER")

    programs = []
    for action in scene.owned_programs:
        if not FIRST_PROGRAM_ACTION <= action < ACTION_COUNT:
            raise ValueError(f"state.ownedPrograms: {action} is not a program action (5..27)")
        credits, energy = PROGRAM_COSTS[action - FIRST_PROGRAM_ACTION]
        programs.append(
            ProgramEntry(
                action, action_name(action), credits, energy, None if mask is None else mask[action]
            )
        )

    basic = (
        []
        if mask is None
        else [(name, mask[i]) for i, name in enumerate(DIRECTION_NAMES + ("siphon",))]
    )

    lines: list[RewardLine] = []
    total = reward
    if reward_components is not None:
        unknown = set(reward_components) - set(REWARD_COMPONENT_NAMES)
        if unknown:
            raise ValueError(f"reward_components: unknown keys {sorted(unknown)}")
        running = 0.0
        for name in REWARD_COMPONENT_NAMES:
            value = float(reward_components.get(name, 0.0))
            running += value
            if value != 0.0:
                lines.append(RewardLine(name, value))
        if total is None:
            total = running

    return Panel(
        stats=stats,
        flags=flags,
        programs=programs,
        basic_actions=basic,
        last_action=None
        if last_action is None
        else f"{action_name(int(last_action))} ({int(last_action)})",
        reward_total=None if total is None else float(total),
        reward_lines=lines,
    )
