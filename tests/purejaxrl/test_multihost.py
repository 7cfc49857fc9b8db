"""Multi-process training on one machine (docs/training-guide.md, "Multi-host").

Real processes joined by `jax.distributed` over 127.0.0.1 (gloo collectives
on CPU), each seeing only its own CPU device, train the tiny config of
test_runs.py. The stand-in game keeps the compiles short: what is tested
here (env shards per process, gathers, who writes, agreement, failure) does
not depend on the game.
"""

import json
import os
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import psutil
import pytest
from conftest import REPO, TINY_BATCH, TINY_FLAGS, subprocess_env

from hackmatrix.purejaxrl import cli

GAME = "standin_env"
TINY = [*TINY_FLAGS, "--no-episode-gif", "--env-module", GAME]
BATCH = TINY_BATCH
TRAINER = REPO / "python/scripts/train_purejaxrl.py"
LAUNCHER = REPO / "python/scripts/launch_multihost.py"
RUN_TIMEOUT = 480
# Float tolerance against one process: the same as the four-device test in test_runs.py.
RTOL, ATOL = 2e-4, 1e-5


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_processes(n, args_for, logs_dir, timeout_s=60):
    """n trainer processes on 127.0.0.1; process i gets args_for(i); output to logs_dir/p{i}.log."""
    port = free_port()
    logs_dir.mkdir(parents=True, exist_ok=True)
    procs = []
    for i in range(n):
        cmd = [
            sys.executable,
            str(TRAINER),
            *args_for(i),
            "--coordinator-address",
            f"127.0.0.1:{port}",
            "--num-processes",
            str(n),
            "--process-id",
            str(i),
            "--distributed-timeout",
            str(timeout_s),
        ]
        with open(logs_dir / f"p{i}.log", "w") as log:
            procs.append(
                subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=subprocess_env())
            )
    return procs


def wait_all(procs, logs_dir, timeout=RUN_TIMEOUT):
    deadline = time.time() + timeout
    try:
        for proc in procs:
            proc.wait(timeout=max(1, deadline - time.time()))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    outputs = [(logs_dir / f"p{i}.log").read_text() for i in range(len(procs))]
    for i, (proc, out) in enumerate(zip(procs, outputs)):
        assert proc.returncode == 0, f"process {i} exited with {proc.returncode}:\n{out[-3000:]}"
    return outputs


def launch(n, *trainer_args, timeout=RUN_TIMEOUT):
    out = subprocess.run(
        [sys.executable, str(LAUNCHER), "--num-processes", str(n), "--", *TINY, *trainer_args],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=timeout,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


def checkpoint(run_dir, step):
    return pickle.loads((run_dir / f"checkpoint_{step}.pkl").read_bytes())


def metrics_records(run_dir):
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def assert_same_training(multi_dir, single_dir, step):
    a, b = checkpoint(multi_dir, step), checkpoint(single_dir, step)
    worst = 0.0
    for (path, x), y in zip(_leaves(a["params"]), [leaf for _, leaf in _leaves(b["params"])]):
        np.testing.assert_allclose(x, y, rtol=RTOL, atol=ATOL, err_msg=path)
        worst = max(worst, float(np.max(np.abs(x - y))))
    print(f"\n[multihost] update {step}: largest parameter difference to one process {worst:.2e}")
    multi = {r["update"]: r for r in metrics_records(multi_dir)}
    for record in [r for r in metrics_records(single_dir) if r["update"] <= step]:
        for key in ("train/total_loss", "train/entropy", "train/mean_reward", "train/num_episodes"):
            np.testing.assert_allclose(
                multi[record["update"]][key],
                record[key],
                rtol=RTOL,
                atol=ATOL,
                err_msg=f"update {record['update']} {key}",
            )


def _leaves(tree):
    import jax

    return [
        (jax.tree_util.keystr(p), np.asarray(x))
        for p, x in jax.tree_util.tree_leaves_with_path(tree)
    ]


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    """One process, same global num_envs: 4 updates, then a resume to 6."""
    root = tmp_path_factory.mktemp("single")
    assert (
        cli.main(
            [
                *TINY,
                "--checkpoint-dir",
                str(root),
                "--run-name",
                "run",
                "--total-timesteps",
                str(4 * BATCH),
            ]
        )
        == 0
    )
    assert (
        cli.main(
            [
                *TINY,
                "--checkpoint-dir",
                str(root),
                "--resume",
                str(root / "run"),
                "--total-timesteps",
                str(6 * BATCH),
            ]
        )
        == 0
    )
    return root / "run"


@pytest.fixture(scope="module")
def two_processes(tmp_path_factory):
    """Two processes, 4 updates. Process 1 gets its own checkpoint dir: it must stay empty."""
    root = tmp_path_factory.mktemp("multi")

    def args_for(i):
        return [
            *TINY,
            "--checkpoint-dir",
            str(root / ("ck" if i == 0 else "ck_p1")),
            "--run-name",
            "run",
            "--total-timesteps",
            str(4 * BATCH),
        ]

    start = time.time()
    outputs = wait_all(start_processes(2, args_for, root / "logs"), root / "logs")
    print(f"\n[multihost] 2 processes, 4 updates: {time.time() - start:.1f} s wall")
    return root, outputs


def test_two_processes_train_like_one(two_processes, single):
    root, outputs = two_processes
    assert "Device count: 2 over 2 hosts" in outputs[0]
    assert_same_training(root / "ck" / "run", single, 4)


def test_only_process_zero_writes_files_and_prints(two_processes):
    root, outputs = two_processes
    run_dir = root / "ck" / "run"
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "checkpoint_2.pkl",
        "checkpoint_4.pkl",
        "final_params.npz",
        "metrics.jsonl",
        "params_2.npz",
        "params_4.npz",
    ]
    assert [r["update"] for r in metrics_records(run_dir)] == [2, 4]  # one writer, no duplicates
    assert not (root / "ck_p1").exists()
    assert "Saved checkpoint_4.pkl" in outputs[0]
    assert (
        "Saved" not in outputs[1]
        and "[Update" not in outputs[1]
        and "Configuration" not in outputs[1]
    )
    # The checkpoint holds the whole env batch, gathered from both processes.
    assert checkpoint(run_dir, 4)["env_batch"]["obs"].shape[0] == 8


def test_resuming_two_processes_continues_the_run(two_processes, single, tmp_path):
    root, _ = two_processes
    run_dir = tmp_path / "run"
    import shutil

    shutil.copytree(root / "ck" / "run", run_dir)  # keep the fixture's run as it was
    out = launch(
        2,
        "--checkpoint-dir",
        str(tmp_path),
        "--resume",
        str(run_dir),
        "--total-timesteps",
        str(6 * BATCH),
    )
    assert "Resuming run run from checkpoint_4.pkl (update 4)" in out
    assert "and the env batch" in out
    payload = checkpoint(run_dir, 6)
    assert payload["step"] == 6 and payload["timesteps"] == 6 * BATCH
    assert [r["update"] for r in metrics_records(run_dir)] == [2, 4, 6]
    assert_same_training(run_dir, single, 6)


# The long variants run with HACKMATRIX_SLOW=1 (as the parity fuzz run does).
SLOW = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.environ.get("HACKMATRIX_SLOW"),
        reason="set HACKMATRIX_SLOW=1 for the long multi-host runs",
    ),
]


@pytest.mark.parametrize("how", ["SIGKILL", pytest.param("SIGSTOP", marks=SLOW)])
def test_a_dead_process_makes_the_other_exit_with_an_error(tmp_path, how):
    """SIGKILL: the peer's sockets close; SIGSTOP: it hangs silently, only the heartbeat tells."""

    def args_for(i):
        return [
            *TINY,
            "--checkpoint-dir",
            str(tmp_path / f"ck{i}"),
            "--run-name",
            "run",
            "--total-timesteps",
            str(100_000 * BATCH),
        ]

    procs = start_processes(2, args_for, tmp_path, timeout_s=10)
    try:
        deadline = time.time() + RUN_TIMEOUT
        while "[Update" not in (tmp_path / "p0.log").read_text():
            assert time.time() < deadline and procs[0].poll() is None, (
                tmp_path / "p0.log"
            ).read_text()
            time.sleep(0.5)
        procs[1].send_signal(getattr(signal, how))
        killed_at = time.time()
        procs[0].wait(timeout=120)
        waited = time.time() - killed_at
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    out = (tmp_path / "p0.log").read_text()
    print(f"\n[multihost] survivor exited {waited:.1f} s after its peer got {how}")
    assert procs[0].returncode != 0 and waited < 60  # --distributed-timeout 10 bounds the wait
    # Either its next collective failed (the trainer's message) or jax's heartbeat check ended it.
    assert (
        "process 0: a collective with the other 1 process(es) failed" in out
        or "Terminating process because the JAX distributed service detected fatal errors" in out
    ), out[-3000:]


def test_the_launcher_stops_the_rest_when_one_dies(tmp_path):
    proc = subprocess.Popen(
        [
            sys.executable,
            str(LAUNCHER),
            "--num-processes",
            "2",
            "--",
            *TINY,
            "--checkpoint-dir",
            str(tmp_path),
            "--run-name",
            "run",
            "--total-timesteps",
            str(100_000 * BATCH),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=subprocess_env(),
    )
    children = []
    try:  # no need to wait for training: the watchdog only watches exit statuses
        deadline = time.time() + 60
        while len(children) < 2 and time.time() < deadline:
            children = psutil.Process(proc.pid).children()
            time.sleep(0.2)
        assert len(children) == 2
        time.sleep(2.0)
        victim = [
            c
            for c in children
            if "--process-id" in c.cmdline()
            and c.cmdline()[c.cmdline().index("--process-id") + 1] == "1"
        ][0]
        victim.kill()
        out = proc.communicate(timeout=60)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    assert "process 1 exited with status -9; stopping the other processes" in out
    gone, alive = psutil.wait_procs(children, timeout=5)
    assert not alive


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("HACKMATRIX_SLOW"),
    reason="set HACKMATRIX_SLOW=1 for the long multi-host runs",
)
def test_four_processes_train_like_one(single, tmp_path):
    start = time.time()
    launch(
        4,
        "--checkpoint-dir",
        str(tmp_path),
        "--run-name",
        "run",
        "--total-timesteps",
        str(4 * BATCH),
    )
    print(f"\n[multihost] 4 processes, 4 updates: {time.time() - start:.1f} s wall")
    assert_same_training(tmp_path / "run", single, 4)


def test_bad_process_settings_are_refused_before_joining(tmp_path, monkeypatch, capsys):
    argv = [
        *TINY,
        "--checkpoint-dir",
        str(tmp_path),
        "--run-name",
        "run",
        "--coordinator-address",
        "127.0.0.1:1",
    ]
    assert cli.main([*argv, "--num-processes", "2", "--process-id", "2"]) == 2
    assert "--process-id must be in [0, 2), got 2" in capsys.readouterr().err
    monkeypatch.setenv("JAX_NUM_PROCESSES", "two")
    assert cli.main([*argv, "--process-id", "0"]) == 2
    assert "JAX_NUM_PROCESSES='two' is not an integer" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
