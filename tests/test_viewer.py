"""The pygame viewer (headless with SDL_VIDEODRIVER=dummy), its terminal fallback,
and watch_jax_agent.py recording a GIF from a checkpoint."""

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hackmatrix.render import PALETTE, Layout, render_rgb
from hackmatrix.render.viewer import Viewer, display_available

REPO = Path(__file__).resolve().parents[1]
STATE = {
    "player": {"row": 1, "col": 1, "hp": 3, "credits": 2},
    "enemies": [{"type": "daemon", "row": 4, "col": 1, "hp": 2}],
    "blocks": [{"row": 3, "col": 3, "type": "data", "points": 4}],
    "ownedPrograms": [10],
}


def _no_display_env(monkeypatch):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")


@pytest.mark.parametrize(
    "environ, platform, expected",
    [
        ({}, "linux", False),
        ({"DISPLAY": ":0"}, "linux", True),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True),
        ({"SDL_VIDEODRIVER": "dummy"}, "linux", True),
        ({}, "darwin", True),
        ({}, "freebsd14", False),
    ],
)
def test_display_detection(environ, platform, expected):
    assert display_available(environ, platform) is expected


def test_no_display_falls_back_to_terminal_text(monkeypatch):
    _no_display_env(monkeypatch)
    out = io.StringIO()
    viewer = Viewer(mode="auto", stream=out)
    assert viewer.mode == "text" and "no display" in viewer.fallback_reason
    assert viewer.show(STATE, mask=[True] * 28, title="episode 1") is None
    text = out.getvalue()
    assert "episode 1" in text and "D2" in text and "HP: 3/3" in text
    assert "\x1b[" not in text  # not a terminal: plain text
    viewer.close()


def test_explicit_window_mode_without_driver_raises(monkeypatch):
    _no_display_env(monkeypatch)
    monkeypatch.setenv("SDL_VIDEODRIVER", "no-such-driver")
    with pytest.raises(RuntimeError, match="pygame window"):
        Viewer(mode="window")


def test_bad_mode_is_rejected():
    with pytest.raises(ValueError, match="mode"):
        Viewer(mode="fullscreen")


@pytest.fixture
def headless_viewer(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    viewer = Viewer(mode="auto")
    yield viewer
    viewer.close()


def test_headless_window_shows_and_captures_frames(headless_viewer):
    assert headless_viewer.mode == "window"
    frame = headless_viewer.show(STATE, title="step 0")
    assert frame.dtype == np.uint8 and frame.shape == (Layout(1.0).height, Layout(1.0).width, 3)
    shot = headless_viewer.capture()
    assert np.array_equal(shot, frame)
    x, y = Layout(1.0).cell_center(4, 1)
    assert tuple(shot[y, x]) == PALETTE["daemon"]
    moved = dict(STATE, player={"row": 2, "col": 1})
    second = headless_viewer.show(moved, title="step 1")
    assert not np.array_equal(second, frame)
    assert np.array_equal(headless_viewer.capture(), second)


def test_headless_window_reads_keys(headless_viewer):
    import pygame

    headless_viewer.show(STATE)
    pygame.event.post(
        pygame.event.Event(pygame.KEYDOWN, key=pygame.K_UP, unicode="", mod=0, scancode=0)
    )
    pygame.event.post(
        pygame.event.Event(pygame.KEYDOWN, key=pygame.K_s, unicode="s", mod=0, scancode=0)
    )
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    assert headless_viewer.poll_keys() == ["up", "s", "quit"]
    assert headless_viewer.wait_key(timeout=0.05) is None
    assert headless_viewer.sleep(0.01) is True


def test_wait_key_hands_out_queued_keys_one_at_a_time(headless_viewer):
    import pygame

    headless_viewer.show(STATE)
    for key in (pygame.K_LEFT, pygame.K_RIGHT, pygame.K_q):
        pygame.event.post(
            pygame.event.Event(pygame.KEYDOWN, key=key, unicode="", mod=0, scancode=0)
        )
    assert [headless_viewer.wait_key(timeout=1) for _ in range(3)] == ["left", "right", "q"]
    assert headless_viewer.wait_key(timeout=0.05) is None


def test_closed_viewer_refuses_to_show(headless_viewer):
    headless_viewer.close()
    with pytest.raises(RuntimeError, match="closed"):
        headless_viewer.show(STATE)


def test_capture_before_any_frame_is_an_error(headless_viewer):
    with pytest.raises(RuntimeError, match="capture"):
        headless_viewer.capture()


def test_text_viewer_cannot_show_raw_frames(monkeypatch):
    _no_display_env(monkeypatch)
    viewer = Viewer(mode="text", stream=io.StringIO())
    with pytest.raises(RuntimeError, match="window"):
        viewer.show_frame(render_rgb(STATE))


# ------------------------------------------------------------ watch_jax_agent.py


@pytest.fixture(scope="session")
def jax_cache(tmp_path_factory):
    """One on-disk compilation cache for every script run in the session (compiling the engine's
    step takes about a minute on a small CPU; loading it from the cache takes seconds)."""
    return Path(
        os.environ.get("JAX_COMPILATION_CACHE_DIR")
        or tmp_path_factory.getbasetemp() / "jax-compile-cache"
    )


def _script_env(cache_dir=None, **extra):
    env = dict(os.environ)
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        env.pop(name, None)
    env.update(JAX_PLATFORMS="cpu", WANDB_MODE="offline", PYTHONPATH=str(REPO / "python"), **extra)
    if cache_dir is not None:
        env["JAX_COMPILATION_CACHE_DIR"] = str(cache_dir)
    return env


def _tiny_params(path: Path, hidden_dim: int = 16, num_layers: int = 1) -> Path:
    """Freshly initialised parameters in the trainer's npz layout (training.md §4.1)."""
    jax = pytest.importorskip("jax")
    from hackmatrix.purejaxrl.checkpoint import save_params_npz
    from hackmatrix.purejaxrl.network import ActorCritic

    params = ActorCritic(hidden_dim=hidden_dim, num_layers=num_layers).init(
        jax.random.PRNGKey(0), np.zeros((1545,), np.float32)
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_params_npz(path, params)


def test_policy_detects_architecture_and_rejects_mismatch(tmp_path):
    from hackmatrix.render.agent_policy import PolicyLoadError, find_latest_params, load_policy

    npz = _tiny_params(
        tmp_path / "runs" / "hackmatrix-jax-jan01-26-1" / "params_3.npz",
        hidden_dim=16,
        num_layers=2,
    )
    policy = load_policy(npz)
    assert (policy.architecture.hidden_dim, policy.architecture.num_layers) == (16, 2)
    mask = np.zeros(28, bool)
    mask[[2, 9]] = True
    assert policy.act(np.zeros(1545, np.float32), mask) in (2, 9)
    assert policy.act(np.zeros(1545, np.float32), mask, greedy=False) in (2, 9)
    with pytest.raises(PolicyLoadError, match="requested hidden_dim=32.*detected hidden_dim=16"):
        load_policy(npz, hidden_dim=32)
    with pytest.raises(PolicyLoadError, match="no such file"):
        load_policy(tmp_path / "missing.npz")
    assert find_latest_params(tmp_path / "runs") == npz
    final = _tiny_params(npz.parent / "final_params.npz", hidden_dim=16, num_layers=2)
    assert find_latest_params(tmp_path / "runs") == final
    (tmp_path / "empty").mkdir()
    with pytest.raises(PolicyLoadError, match="no final_params"):
        find_latest_params(tmp_path / "empty")
    with pytest.raises(PolicyLoadError, match="does not exist"):
        find_latest_params(tmp_path / "missing-dir")


def _watch(args, tmp_path, cache_dir=None, timeout=600):
    return subprocess.run(
        [sys.executable, str(REPO / "python/scripts/watch_jax_agent.py"), *args],
        cwd=tmp_path,
        env=_script_env(cache_dir),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _steps_taken(stdout: str) -> int:
    return sum(int(m) for m in re.findall(r"episode \d+: \w[\w ]*, (\d+) steps", stdout))


def test_watch_records_one_gif_frame_per_step_on_jax(tmp_path, jax_cache):
    pytest.importorskip("hackmatrix.jax_env.serialization")
    from PIL import Image

    # The tiny trainer's network size, as the freshly trained checkpoint below: the two
    # watches share one compiled policy.
    _tiny_params(
        tmp_path / "checkpoints" / "hackmatrix-jax-jan01-26-1" / "params_1.npz",
        hidden_dim=32,
        num_layers=2,
    )
    gif = tmp_path / "episode.gif"
    result = _watch(
        [
            "--latest",
            "--engine",
            "jax",
            "--episodes",
            "2",
            "--max-steps",
            "6",
            "--seed",
            "3",
            "--speed",
            "0",
            "--record",
            str(gif),
        ],
        tmp_path,
        jax_cache,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    steps = _steps_taken(result.stdout)
    assert 2 <= steps <= 12
    assert f"recorded {steps} frames" in result.stdout
    assert "invalid actions reported by the jax engine: 0" in result.stdout
    assert "Programs:" in result.stdout  # the text board (no display here)
    with Image.open(gif) as image:
        assert image.n_frames == steps


def _purejaxrl_tiny_flags() -> list[str]:
    """TINY_FLAGS of tests/purejaxrl/conftest.py, read by path (several conftest modules
    share the name "conftest")."""
    from script_loading import load_path

    module = load_path(REPO / "tests" / "purejaxrl" / "conftest.py", "purejaxrl_test_conftest")
    return list(module.TINY_FLAGS)


@pytest.mark.slow
def test_watch_a_freshly_trained_checkpoint(tmp_path, jax_cache):
    """Train a tiny run with the real trainer, then record its play."""
    pytest.importorskip("hackmatrix.jax_env.serialization")
    from PIL import Image

    train = subprocess.run(
        [
            sys.executable,
            str(REPO / "python/scripts/train_purejaxrl.py"),
            # The trainer tests' tiny configuration: its compiled chunk is usually in the
            # shared compilation cache by now, so this run reads it instead of compiling.
            *_purejaxrl_tiny_flags(),
            "--total-timesteps",
            "128",
            "--no-episode-gif",  # the checkpoint's own GIF is test_episode_gif.py's
            "--checkpoint-dir",
            str(tmp_path / "checkpoints"),
        ],
        cwd=tmp_path,
        env=_script_env(jax_cache),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert train.returncode == 0, train.stdout[-3000:] + train.stderr[-3000:]
    gif = tmp_path / "trained.gif"
    result = _watch(
        [
            "--latest",
            "--checkpoint-dir",
            str(tmp_path / "checkpoints"),
            "--engine",
            "jax",
            "--episodes",
            "1",
            "--max-steps",
            "5",
            "--seed",
            "11",
            "--speed",
            "0",
            "--no-view",
            "--record",
            str(gif),
        ],
        tmp_path,
        jax_cache,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "hidden_dim 32, num_layers 2" in result.stdout
    steps = _steps_taken(result.stdout)
    with Image.open(gif) as image:
        assert image.n_frames == steps >= 1


def test_watch_reports_a_bad_model_path_clearly(tmp_path):
    result = _watch([str(tmp_path / "nope.npz"), "--engine", "jax"], tmp_path, timeout=300)
    assert result.returncode == 2
    assert "nope.npz" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.swift
def test_watch_plays_on_swift_by_default(tmp_path, swift_binary):
    from PIL import Image

    npz = _tiny_params(tmp_path / "run" / "params_2.npz", hidden_dim=8, num_layers=2)
    gif = tmp_path / "swift.gif"
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "python/scripts/watch_jax_agent.py"),
            str(npz.parent),
            "--episodes",
            "2",
            "--max-steps",
            "4",
            "--seed",
            "21",
            "--speed",
            "0",
            "--sample",
            "--record",
            str(gif),
        ],
        cwd=tmp_path,
        env=_script_env(HACKMATRIX_BINARY=str(swift_binary)),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "swift engine" in result.stdout and "sampled actions" in result.stdout
    assert "invalid actions reported by the swift engine: 0" in result.stdout
    steps = _steps_taken(result.stdout)
    with Image.open(gif) as image:
        assert image.n_frames == steps >= 2


@pytest.mark.swift
def test_both_engines_draw_the_same_start_board(swift_binary, jax_cache):
    """Swift's getState and JAX's state_to_json describe one game, so their frames match."""
    pytest.importorskip("hackmatrix.jax_env.serialization")
    jax = pytest.importorskip("jax")
    from hackmatrix.render.sessions import JaxSession, SwiftSession

    previous = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", str(jax_cache))
    swift, jax_session = SwiftSession(swift_binary), JaxSession()
    try:
        for seed in (0, 12345):
            swift.reset(seed)
            jax_session.reset(seed)
            assert swift.mask() == jax_session.mask()
            assert np.array_equal(
                render_rgb(swift.state(), mask=swift.mask()),
                render_rgb(jax_session.state(), mask=jax_session.mask()),
            )
    finally:
        swift.close()
        jax_session.close()
        jax.config.update("jax_compilation_cache_dir", previous)
