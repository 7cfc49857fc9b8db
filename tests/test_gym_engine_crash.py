"""HackMatrix-v0 survives a dead Swift engine (training.md §6.3).

Every kill here is a real SIGKILL of the engine process. Alongside each
scenario the test checks that no engine process outlives its env: the pids
seen while running must be gone (not running, not a zombie) afterwards.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import psutil
import pytest

from hackmatrix.swift_bridge.client import EngineCrashed
from hackmatrix.swift_bridge.gym_env import (
    EngineRestartWarning,
    HackMatrixEnv,
    TruncateOnEngineCrash,
)

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.swift


def first_valid(mask) -> int:
    return int(np.flatnonzero(mask)[0])


def assert_gone(pids, within: float = 10.0):
    """Each pid has exited and been reaped (a zombie still counts as left behind)."""
    deadline = time.time() + within
    left = list(pids)
    while left and time.time() < deadline:
        left = [pid for pid in left if _alive_or_zombie(pid)]
        if left:
            time.sleep(0.1)
    assert not left, f"engine processes left behind: {[_describe(pid) for pid in left]}"


def _alive_or_zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() is not None
    except psutil.NoSuchProcess:
        return False


def _describe(pid: int) -> str:
    try:
        process = psutil.Process(pid)
        return f"{pid} ({process.status()}, parent {process.ppid()})"
    except psutil.NoSuchProcess:
        return f"{pid} (gone)"


def engine_pids_under(pid: int, binary: Path) -> list[int]:
    """Swift engines among the descendants of `pid`."""
    found = []
    for child in psutil.Process(pid).children(recursive=True):
        try:
            if child.exe() == str(binary) or Path(child.cmdline()[0]).name == binary.name:
                found.append(child.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied, IndexError):
            pass
    return found


# ------------------------------------------------------------------- one env


def test_steps_after_a_crash_raise_until_reset_starts_a_fresh_engine(swift_binary):
    env = HackMatrixEnv(binary=str(swift_binary))
    try:
        _, info = env.reset(seed=9)
        assert info["engine_restarts"] == 0
        dead = env.engine_pid
        os.kill(dead, signal.SIGKILL)
        with pytest.raises(EngineCrashed):
            env.step(first_valid(env.action_masks()))
        with pytest.raises(EngineCrashed, match="call reset"):  # still dead: no silent recovery
            env.step(0)
        with pytest.warns(EngineRestartWarning, match=f"pid {dead}"):
            _, info = env.reset(seed=9)
        assert info["engine_restarts"] == env.engine_restarts == 1
        assert env.engine_pid != dead
        assert_gone([dead])
        _, _, _, _, info = env.step(first_valid(env.action_masks()))
        assert not info["invalid_action"]
    finally:
        pids = [env.engine_pid]
        env.close()
    assert_gone(pids)
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()


def test_a_kill_between_episodes_is_repaired_by_the_next_reset(swift_binary):
    env = HackMatrixEnv(binary=str(swift_binary))
    try:
        first, _ = env.reset(seed=4)
        dead = env.engine_pid
        os.kill(dead, signal.SIGKILL)
        with pytest.warns(EngineRestartWarning):
            again, info = env.reset(seed=4)
        assert info["engine_restarts"] == 1
        np.testing.assert_array_equal(again["grid"], first["grid"])  # same seed, same stage
        assert_gone([dead])
    finally:
        env.close()


# --------------------------------------------------------------- vector envs


def _wrapped_factory(binary: str):
    def make():
        return TruncateOnEngineCrash(HackMatrixEnv(binary=binary))

    return make


def test_sb3_subproc_vec_env_keeps_running_after_a_kill(swift_binary):
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import SubprocVecEnv

    vec = SubprocVecEnv(
        [_wrapped_factory(str(swift_binary)) for _ in range(2)], start_method="forkserver"
    )
    seen = set()
    try:
        vec.seed(5)
        vec.reset()
        dead = vec.get_attr("engine_pid", indices=[0])[0]
        seen.update(vec.get_attr("engine_pid"))
        os.kill(dead, signal.SIGKILL)
        rng = np.random.default_rng(0)
        crashed = []
        for _ in range(40):
            actions = [int(rng.choice(np.flatnonzero(m))) for m in get_action_masks(vec)]
            _, _, dones, infos = vec.step(np.array(actions))
            crashed += [i for i, info in enumerate(infos) if "engine_crashed" in info]
            assert not any(info["invalid_action"] for info in infos)
            if "engine_crashed" in infos[0]:
                assert dones[0] and infos[0]["TimeLimit.truncated"]
            seen.update(vec.get_attr("engine_pid"))
        assert crashed == [0]
        assert vec.get_attr("engine_restarts") == [1, 0]
        assert vec.get_attr("engine_pid", indices=[0])[0] != dead
    finally:
        vec.close()
    assert_gone(seen)


def test_gymnasium_async_vector_env_keeps_running_after_a_kill(swift_binary):
    factories = [_wrapped_factory(str(swift_binary)) for _ in range(2)]
    vec = gym.vector.AsyncVectorEnv(factories, context="forkserver")
    seen = set()
    try:
        _, info = vec.reset(seed=[1, 2])
        masks = info["action_mask"]
        dead = vec.get_attr("engine_pid")[1]
        seen.update(vec.get_attr("engine_pid"))
        os.kill(dead, signal.SIGKILL)
        rng = np.random.default_rng(1)
        truncated_by_crash = 0
        for _ in range(20):
            actions = np.array(
                [int(rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in masks]
            )
            _, _, _, truncated, info = vec.step(actions)
            if "engine_crashed" in info and info["_engine_crashed"][1]:
                truncated_by_crash += 1
                assert truncated[1]
            masks = np.stack(vec.call("action_masks"))
            seen.update(vec.get_attr("engine_pid"))
        assert truncated_by_crash == 1
        assert list(vec.get_attr("engine_restarts")) == [0, 1]
    finally:
        vec.close()
    assert_gone(seen)


def test_a_python_exception_leaves_no_engine_behind(swift_binary):
    """The owner dies of an uncaught exception without closing its vector env."""
    script = (
        "import sys\n"
        "from stable_baselines3.common.vec_env import SubprocVecEnv\n"
        "from hackmatrix.swift_bridge.gym_env import HackMatrixEnv\n"
        "def make():\n"
        f"    return HackMatrixEnv(binary={str(swift_binary)!r})\n"
        "if __name__ == '__main__':\n"
        "    vec = SubprocVecEnv([make, make], start_method='forkserver')\n"
        "    vec.reset()\n"
        "    print('pids', *vec.get_attr('engine_pid'), flush=True)\n"
        "    raise RuntimeError('boom')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO / "python")},
    )
    assert out.returncode == 1 and "RuntimeError: boom" in out.stderr, out.stderr[-2000:]
    pids = [int(p) for p in out.stdout.split("pids", 1)[1].split()]
    assert len(pids) == 2
    assert_gone(pids)


# -------------------------------------------------------------- SB3 train.py

SMALL = [
    "--n-steps",
    "128",
    "--batch-size",
    "64",
    "--n-epochs",
    "1",
    "--save-freq",
    "100000",
    "--eval-freq",
    "100000",
    "--eval-episodes",
    "1",
    "--max-episode-steps",
    "100",
    "--no-progress-bar",
    "--no-wandb",
    "--num-envs",
    "2",
]


def process_tree(pid: int) -> list[str]:
    """'pid status command' for a process and its descendants (for failure messages)."""
    try:
        root = psutil.Process(pid)
        return [
            f"{p.pid} {p.status()} {' '.join(p.cmdline()[:3])}"
            for p in [root, *root.children(recursive=True)]
        ]
    except psutil.Error as error:
        return [f"({error})"]


def run_train(tmp_path, swift_binary, *extra, env=None, **popen):
    cmd = [
        sys.executable,
        str(REPO / "python/scripts/train.py"),
        *SMALL,
        *extra,
        "--model-dir",
        str(tmp_path / "models"),
        "--log-dir",
        str(tmp_path / "logs"),
        "--binary",
        str(swift_binary),
    ]
    return subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "WANDB_MODE": "offline", **(env or {})},
        **popen,
    )


def test_sb3_train_finishes_after_an_engine_is_killed_mid_run(tmp_path, swift_binary):
    proc = run_train(
        tmp_path,
        swift_binary,
        "--timesteps",
        "512",
        "--seed",
        "2",
        env={"HACKMATRIX_TEST_KILL_ENGINE_AT": "150"},
    )
    out = proc.communicate(timeout=300)[0]
    assert proc.returncode == 0, out[-3000:]
    assert "killing env 0's Swift engine" in out
    assert "Engine crash in env 0" in out and "a fresh engine starts on its reset" in out
    assert "restart 1 of this env" in out  # the worker's EngineRestartWarning
    (run_dir,) = [d for d in (tmp_path / "models").iterdir() if d.is_dir()]
    assert (run_dir / "final_model.zip").is_file()


def _sigint_as_in_a_terminal() -> None:
    """Runs in the child before exec: SIGINT back to its default disposition.

    A signal ignored by a parent stays ignored across exec, and a background job
    started by a non-interactive shell (`test.sh ... &` in a script) ignores SIGINT.
    Without this the trainer would inherit that and never see the Ctrl+C.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_sb3_train_ctrl_c_leaves_no_engine_behind(tmp_path, swift_binary):
    # A terminal's Ctrl+C reaches the whole process group: trainer, workers and engines.
    proc = run_train(
        tmp_path,
        swift_binary,
        "--timesteps",
        "1000000",
        start_new_session=True,
        preexec_fn=_sigint_as_in_a_terminal,
    )
    pids: set[int] = set()
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("Training "):
            break
    deadline = time.time() + 60
    while len(pids) < 3 and time.time() < deadline:  # two training envs and the eval env
        pids.update(engine_pids_under(proc.pid, swift_binary))
        time.sleep(0.2)
    time.sleep(2.0)  # inside model.learn by now
    pids.update(engine_pids_under(proc.pid, swift_binary))
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out = "".join(lines) + proc.communicate(timeout=120)[0]
    except subprocess.TimeoutExpired:
        # Say who is still alive, then clean up.
        alive = process_tree(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)
        rest = proc.communicate()[0] or ""
        # The output tail says whether the trainer ever saw the interrupt or kept on training
        # (as it did when SIGINT was inherited as ignored, before _sigint_as_in_a_terminal).
        pytest.fail(
            f"train.py did not exit within 120 s of Ctrl+C; still running: {alive}; "
            f"engines seen before it: {sorted(pids)}; its output ended with:\n"
            + ("".join(lines) + rest)[-4000:]
        )
    assert proc.returncode == 130, out[-3000:]
    assert len(pids) >= 3, out[-3000:]
    assert "saved" in out and "interrupted_model.zip" in out
    assert_gone(pids)
