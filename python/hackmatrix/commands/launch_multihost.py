"""Start N trainer processes on this machine as one multi-host run (docs/training-guide.md).

    hackmatrix-launch-multihost --num-processes 2 -- --num-envs 64 --no-wandb

`hackmatrix-launch-multihost` is the installed command;
`python python/scripts/launch_multihost.py` runs the same `main`.

Every argument after `--` goes to the JAX trainer (hackmatrix-train-jax)
unchanged; the launcher adds --coordinator-address 127.0.0.1:PORT,
--num-processes and --process-id.
Process 0's output is passed through as is, the others' lines are prefixed
with `[process i]`. If one process dies, the launcher stops the rest
(SIGTERM, then SIGKILL) and exits with the dead one's status, so a crash
never leaves the others waiting on a collective. SIGINT/SIGTERM sent to the
launcher are forwarded: the trainers agree to stop, process 0 saves.

On CPU each process gets --devices-per-process XLA devices; on a multi-GPU
box --gpus-per-process K gives process i the GPUs i*K .. i*K+K-1.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time

# The JAX trainer (hackmatrix-train-jax), started the same way from a checkout or an install.
TRAINER_COMMAND = (
    "-c",
    "import sys; from hackmatrix.purejaxrl.cli import main; sys.exit(main())",
)
GRACE_SECONDS = 10.0
# A trainer exits with this status when a collective failed because a peer died
# (purejaxrl/cli.py): a consequence, never the cause worth reporting.
PEER_LOST_STATUS = 3
# How long to wait for the first failure's peers to settle before naming the cause.
SETTLE_SECONDS = 1.0


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-processes", type=int, required=True)
    parser.add_argument(
        "--port", type=int, default=None, help="coordinator port (default: a free one)"
    )
    parser.add_argument(
        "--devices-per-process",
        type=int,
        default=1,
        help="XLA CPU devices per process (ignored on GPU/TPU)",
    )
    parser.add_argument(
        "--gpus-per-process",
        type=int,
        default=None,
        help="give each process its own K GPUs (JAX_LOCAL_DEVICE_IDS)",
    )
    parser.add_argument(
        "trainer_args",
        nargs=argparse.REMAINDER,
        help="-- then the arguments for the JAX trainer (hackmatrix-train-jax)",
    )
    args = parser.parse_args(argv)
    if args.num_processes < 1:
        parser.error(f"--num-processes must be at least 1, got {args.num_processes}")
    if args.devices_per_process < 1:
        parser.error(f"--devices-per-process must be at least 1, got {args.devices_per_process}")
    if args.gpus_per_process is not None and args.gpus_per_process < 1:
        parser.error(f"--gpus-per-process must be at least 1, got {args.gpus_per_process}")
    if args.trainer_args[:1] == ["--"]:
        args.trainer_args = args.trainer_args[1:]
    taken = {"--coordinator-address", "--num-processes", "--process-id"} & set(args.trainer_args)
    if taken:
        parser.error(f"the launcher sets {', '.join(sorted(taken))} itself")
    return args


def _die_with_parent():
    """Linux: children get SIGKILL if the launcher itself is killed (no orphans)."""
    with contextlib.suppress(OSError):  # not Linux: no such call
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def process_env(index: int, args) -> dict:
    env = dict(os.environ)
    flags = env.get("XLA_FLAGS", "")
    if "--xla_force_host_platform_device_count" not in flags:
        env["XLA_FLAGS"] = (
            f"{flags} --xla_force_host_platform_device_count={args.devices_per_process}".strip()
        )
    if args.gpus_per_process is not None:
        first = index * args.gpus_per_process
        env["JAX_LOCAL_DEVICE_IDS"] = ",".join(str(first + k) for k in range(args.gpus_per_process))
    return env


def _pump(index: int, stream, out):
    prefix = "" if index == 0 else f"[process {index}] "
    for line in stream:
        out.write(prefix + line)
        out.flush()


def launch(args) -> int:
    port = args.port or free_port()
    procs = []
    for index in range(args.num_processes):
        cmd = [
            sys.executable,
            *TRAINER_COMMAND,
            *args.trainer_args,
            "--coordinator-address",
            f"127.0.0.1:{port}",
            "--num-processes",
            str(args.num_processes),
            "--process-id",
            str(index),
        ]
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=process_env(index, args),
            preexec_fn=_die_with_parent,
            start_new_session=True,
        )  # signals arrive only via forward()
        threading.Thread(target=_pump, args=(index, proc.stdout, sys.stdout), daemon=True).start()
        procs.append(proc)

    def forward(signum, _frame):
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signum)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, forward)
    try:
        return watch(procs)
    finally:
        stop_all(procs)


def watch(procs) -> int:
    """Wait for all processes; the first failure stops the others and is returned."""
    while True:
        codes = [proc.poll() for proc in procs]
        failed = [(i, code) for i, code in enumerate(codes) if code not in (None, 0)]
        if failed:
            index, code = root_cause(procs)
            print(
                f"launch_multihost: process {index} exited with status {code}; "
                f"stopping the other processes",
                file=sys.stderr,
                flush=True,
            )
            return code if code > 0 else 128 - code
        if all(code == 0 for code in codes):
            return 0
        time.sleep(0.2)


def root_cause(procs) -> tuple[int, int]:
    """The failed process to report: one that did not merely lose its peer.

    The survivors of a crash notice it within a fraction of a second and exit
    with PEER_LOST_STATUS, often before the launcher's next poll; waiting a
    moment and ranking those last names the process that really died.
    """
    deadline = time.time() + SETTLE_SECONDS
    while time.time() < deadline and any(proc.poll() is None for proc in procs):
        failed = [proc.poll() for proc in procs if proc.poll() not in (None, 0, PEER_LOST_STATUS)]
        if failed:
            break
        time.sleep(0.05)
    failed = [(i, proc.poll()) for i, proc in enumerate(procs) if proc.poll() not in (None, 0)]
    failed.sort(key=lambda item: item[1] == PEER_LOST_STATUS)
    return failed[0]


def stop_all(procs) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    deadline = time.time() + GRACE_SECONDS
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv=None) -> int:
    return launch(parse_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
