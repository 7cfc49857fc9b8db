"""hackmatrix-play (python/scripts/play.py): terminal mode on both engines, the key map."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hackmatrix.render import keymap

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "python/scripts/play.py"


def test_key_map_covers_every_action_once():
    assert sorted(keymap.KEY_ACTIONS.values()) == list(range(28))
    assert keymap.KEY_ACTIONS["u"] == 14  # UNDO
    assert keymap.KEY_ACTIONS["s"] == 4
    assert not set(keymap.KEY_ACTIONS) & set(keymap.QUIT_KEYS + keymap.NEW_GAME_KEYS)


@pytest.mark.parametrize(
    "token, expected",
    [
        ("up", ("action", 0)),
        ("RIGHT", ("action", 3)),
        ("s", ("action", 4)),
        ("siphon", ("action", 4)),
        ("crash", ("action", 7)),
        ("7", ("action", 7)),
        ("u", ("action", 14)),
        ("anti-v", ("action", 23)),
        ("q", ("quit", None)),
        ("quit", ("quit", None)),
        ("new", ("new", None)),
        ("help", ("help", None)),
        ("28", ("unknown", None)),
        ("dance", ("unknown", None)),
    ],
)
def test_parse_command(token, expected):
    assert keymap.parse_command(token) == expected


def test_key_help_lists_owned_programs_in_a_fixed_number_of_lines():
    lines = keymap.key_help_lines([14, 7])
    assert "S siphon" in lines[0]
    assert lines[1:] == ["programs: C crash  U undo", "", ""]
    assert keymap.key_help_lines([])[1] == "programs: none owned yet"
    every = keymap.key_help_lines(range(5, 28))
    assert len(every) == len(lines) == keymap.HELP_LINES == 4  # constant: the window keeps its size
    assert all(len(line) < 100 for line in every) and "J hack" in every[3]


def _play(args, stdin: str, tmp_path, extra_env=None, cache_dir=None):
    env = dict(os.environ)
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        env.pop(name, None)
    env.update(JAX_PLATFORMS="cpu", PYTHONPATH=str(REPO / "python"))
    if cache_dir is not None:
        env["JAX_COMPILATION_CACHE_DIR"] = str(cache_dir)
    env.update(extra_env or {})
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        input=stdin,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


SESSION_INPUT = "help\nbogus\ncrash\nup down left right\nup down left right\nquit\nup\n"


def _check_session(result):
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    assert "terminal mode" in result.stderr  # no display in the test environment
    assert "commands: up down left right" in out
    assert "@ you" in out  # "help" adds the board legend
    assert "unknown command 'bogus'" in out
    assert "not allowed now: crash (7)" in out  # nobody owns CRASH at the start
    steps = re.findall(r"^step (\d+): (\w+) \((\d)\)  reward ([-+]\d+\.\d+)", out, re.M)
    assert steps and [int(s[0]) for s in steps] == list(range(1, len(steps) + 1))
    # the reward breakdown follows each step, and the board is printed again
    assert "Last action: " + steps[0][1] in out
    assert "step_penalty" in out and "Reward: " in out
    assert out.count("Programs:") >= len(steps) + 1
    # "quit" stops before the trailing "up"
    assert len(steps) <= 8


def test_play_in_terminal_on_jax(tmp_path, tmp_path_factory):
    pytest.importorskip("hackmatrix.jax_env.serialization")
    cache = Path(
        os.environ.get("JAX_COMPILATION_CACHE_DIR")
        or tmp_path_factory.getbasetemp() / "jax-compile-cache"
    )
    result = _play(["--engine", "jax", "--seed", "5"], SESSION_INPUT, tmp_path, cache_dir=cache)
    _check_session(result)
    assert "jax engine" in result.stdout and "seed 5" in result.stdout


@pytest.mark.swift
def test_play_in_terminal_on_swift(tmp_path, swift_binary):
    result = _play(
        ["--engine", "swift", "--seed", "5"],
        SESSION_INPUT,
        tmp_path,
        extra_env={"HACKMATRIX_BINARY": str(swift_binary)},
    )
    _check_session(result)
    assert "swift engine" in result.stdout


def test_play_rejects_a_bad_seed(tmp_path):
    result = _play(["--engine", "jax", "--seed", "-1"], "", tmp_path)
    assert result.returncode == 2 and "--seed" in result.stderr


# ------------------------------------------------------ window play, headless


def _load_play_module():
    from hackmatrix.commands import play

    return play


class FakeSession:
    """A 6x6 board where only UP and RIGHT are ever allowed; the third move ends the game."""

    name = "fake"

    def __init__(self):
        self.actions = []
        self.resets = 0

    def reset(self, seed=None):
        self.row, self.col, self.resets = 0, 0, self.resets + 1
        self.actions_this_game = 0
        return 9 if seed is None else seed

    def state(self):
        return {"player": {"row": self.row, "col": self.col}, "ownedPrograms": [14]}

    def mask(self):
        return [i in (0, 3) for i in range(28)]

    def step(self, action):
        from hackmatrix.render.sessions import InvalidActionError, StepOutcome

        if not self.mask()[action]:
            raise InvalidActionError(f"action_masked: {action}")
        self.actions.append(action)
        self.actions_this_game += 1
        self.row, self.col = (self.row + 1, self.col) if action == 0 else (self.row, self.col + 1)
        done = self.actions_this_game == 3
        return StepOutcome(action, -0.01, {"step_penalty": -0.01}, done=done, died=done)

    def close(self):
        pass


def test_window_play_with_keys_on_a_headless_display(monkeypatch, capsys):
    import pygame

    from hackmatrix.render import PALETTE, Layout
    from hackmatrix.render.viewer import Viewer

    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    play = _load_play_module()
    session = FakeSession()
    viewer = Viewer(mode="auto")
    assert viewer.mode == "window"
    game = play.HumanGame(session, seed=4)
    viewer.show(session.state())  # opens the window so events can be posted
    blocking_wait = viewer.wait_key
    monkeypatch.setattr(viewer, "wait_key", lambda: blocking_wait(timeout=10) or "q")
    for key in (pygame.K_RIGHT, pygame.K_s, pygame.K_u, pygame.K_UP, pygame.K_q):
        pygame.event.post(
            pygame.event.Event(pygame.KEYDOWN, key=key, unicode="", mod=0, scancode=0)
        )
    play.play_window(game, viewer)
    out = capsys.readouterr().out
    assert session.actions == [3, 0], out
    assert "not allowed now: siphon (4)" in out and "not allowed now: undo (14)" in out
    assert "step 2: up (0)  reward -0.0100" in out
    x, y = Layout(1.0, footer_lines=keymap.HELP_LINES).cell_center(1, 1)
    assert tuple(viewer.capture()[y, x]) == PALETTE["player"]
    viewer.close()


def test_human_game_stops_at_the_end_and_starts_again():
    play = _load_play_module()
    session = FakeSession()
    game = play.HumanGame(session, seed=4)
    assert game.seed == 4
    game.act(0)
    game.act(3)
    assert any("YOU DIED" in line for line in game.act(0))
    assert game.done and game.act(0)[0].startswith("the game is over")
    assert session.actions == [0, 3, 0]
    game.new_game()
    assert not game.done and game.steps == 0 and session.resets == 2
