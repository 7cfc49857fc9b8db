"""play.py in terminal mode, driven by piped input, on both engines; the key map."""

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


@pytest.mark.parametrize("token, expected", [
    ("up", ("action", 0)), ("RIGHT", ("action", 3)), ("s", ("action", 4)), ("siphon", ("action", 4)),
    ("crash", ("action", 7)), ("7", ("action", 7)), ("u", ("action", 14)), ("anti-v", ("action", 23)),
    ("q", ("quit", None)), ("quit", ("quit", None)), ("new", ("new", None)), ("help", ("help", None)),
    ("28", ("unknown", None)), ("dance", ("unknown", None)),
])
def test_parse_command(token, expected):
    assert keymap.parse_command(token) == expected


def test_key_help_lists_owned_programs_only():
    lines = keymap.key_help_lines([14, 7])
    assert "S siphon" in lines[0]
    assert lines[1] == "programs: C crash  U undo"
    assert len(keymap.key_help_lines([])) == 1


def _play(args, stdin: str, tmp_path, extra_env=None, cache_dir=None):
    env = dict(os.environ)
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        env.pop(name, None)
    env.update(JAX_PLATFORMS="cpu", PYTHONPATH=str(REPO / "python"))
    if cache_dir is not None:
        env["JAX_COMPILATION_CACHE_DIR"] = str(cache_dir)
    env.update(extra_env or {})
    return subprocess.run([sys.executable, str(SCRIPT), *args], input=stdin, cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


SESSION_INPUT = "help\nbogus\ncrash\nup down left right\nup down left right\nquit\nup\n"


def _check_session(result):
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    assert "terminal mode" in result.stderr  # no display in the test environment
    assert "commands: up down left right" in out
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
    cache = tmp_path_factory.getbasetemp() / "jax-compile-cache"
    result = _play(["--engine", "jax", "--seed", "5"], SESSION_INPUT, tmp_path, cache_dir=cache)
    _check_session(result)
    assert "jax engine" in result.stdout and "seed 5" in result.stdout


@pytest.mark.swift
def test_play_in_terminal_on_swift(tmp_path, swift_binary):
    result = _play(["--engine", "swift", "--seed", "5"], SESSION_INPUT, tmp_path,
                   extra_env={"HACKMATRIX_BINARY": str(swift_binary)})
    _check_session(result)
    assert "swift engine" in result.stdout


def test_play_rejects_a_bad_seed(tmp_path):
    result = _play(["--engine", "jax", "--seed", "-1"], "", tmp_path)
    assert result.returncode == 2 and "--seed" in result.stderr
