"""Keyboard and typed-command bindings for human play.

Window keys: arrows move/attack, S siphons, one letter per program (U = UNDO,
shown on screen), N starts a new game, Q or Esc quits. In the terminal a line
holds one or more commands separated by spaces: the same letters, a direction
word (up, down, left, right; arrow keys cannot be read from a line), an action
index 0..27, or an action name ("siphon", "crash"); "new", "help" and "quit"
are commands too.
"""

from __future__ import annotations

from hackmatrix.names import ACTION_COUNT, ACTION_NAMES

# One letter per program, mnemonic where possible; S, N, Q are taken.
PROGRAM_KEYS = {
    "p": 5,  # push
    "l": 6,  # pull
    "c": 7,  # crash
    "w": 8,  # warp
    "y": 9,  # poly
    "t": 10,  # wait
    "d": 11,  # debug
    "r": 12,  # row
    "k": 13,  # col
    "u": 14,  # undo
    "e": 15,  # step
    "i": 16,  # siph+
    "x": 17,  # exch
    "h": 18,  # show
    "z": 19,  # reset
    "m": 20,  # calm
    "b": 21,  # d_bom
    "g": 22,  # delay
    "v": 23,  # anti-v
    "o": 24,  # score
    "f": 25,  # reduc
    "a": 26,  # atk+
    "j": 27,  # hack
}

KEY_ACTIONS = {"up": 0, "down": 1, "left": 2, "right": 3, "s": 4, **PROGRAM_KEYS}
ACTION_KEYS = {action: key for key, action in KEY_ACTIONS.items()}

QUIT_KEYS = ("q", "escape", "quit")
NEW_GAME_KEYS = ("n",)
HELP_KEYS = ("?", "/")

_WORDS = {"quit": "quit", "exit": "quit", "new": "new", "help": "help"}


def key_label(action: int) -> str:
    key = ACTION_KEYS[action]
    return {"up": "↑", "down": "↓", "left": "←", "right": "→"}.get(key, key.upper())


PROGRAMS_PER_HELP_LINE = 8
HELP_LINES = 1 + (len(PROGRAM_KEYS) + PROGRAMS_PER_HELP_LINE - 1) // PROGRAMS_PER_HELP_LINE


def key_help_lines(owned_programs=()) -> list[str]:
    """The key map for the screen: the basics, then the owned programs' keys.

    Always HELP_LINES lines (blank ones at the end), so a window keeps its size as programs are won.
    """
    lines = ["arrows move/attack   S siphon   N new game   Q quit"]
    owned = [a for a in sorted(owned_programs) if a in ACTION_KEYS]
    if not owned:
        lines.append("programs: none owned yet")
    for start in range(0, len(owned), PROGRAMS_PER_HELP_LINE):
        chunk = owned[start : start + PROGRAMS_PER_HELP_LINE]
        prefix = "programs: " if start == 0 else "          "
        lines.append(prefix + "  ".join(f"{key_label(a)} {ACTION_NAMES[a]}" for a in chunk))
    return lines + [""] * (HELP_LINES - len(lines))


def action_for_key(key: str) -> int | None:
    return KEY_ACTIONS.get(key.lower())


def parse_command(token: str) -> tuple[str, int | None]:
    """One typed token -> ("action", index), ("quit"|"new"|"help", None), or ("unknown", None)."""
    word = token.strip().lower()
    if not word:
        return "unknown", None
    if word in _WORDS:
        return _WORDS[word], None
    if word in QUIT_KEYS:
        return "quit", None
    if word in NEW_GAME_KEYS:
        return "new", None
    if word in HELP_KEYS:
        return "help", None
    if word.isdigit():
        index = int(word)
        return ("action", index) if 0 <= index < ACTION_COUNT else ("unknown", None)
    if word in ACTION_NAMES:
        return "action", ACTION_NAMES.index(word)
    if word in ("siph", "siphon"):
        return "action", 4
    action = action_for_key(word)
    if action is not None:
        return "action", action
    return "unknown", None
