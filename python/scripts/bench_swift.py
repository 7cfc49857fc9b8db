#!/usr/bin/env python3
"""Steps per second of the Swift engine: in-process and over the JSON pipe.

1. In-process: ``hackmatrix --bench N`` runs a random valid-action policy over
   seeded episodes inside the binary, once through the engine API alone and
   once through the protocol session (request parsing and response JSON, no pipe).
2. Over the pipe: this script drives the CLI as a child process the way the
   Gymnasium env does: ``reset`` with seeds 0, 1, 2, ..., then ``step`` lines
   with an action drawn uniformly from the ``action_mask`` of the previous
   response; every response is parsed with the client's parser
   (``hackmatrix.swift_bridge.client.parse_response``: orjson, else json).

Prints a table and writes JSON (default bench_results/bench_swift.json).
The original engine managed about 570 steps/s over the pipe.

    python python/scripts/bench_swift.py                    # ~30 s on 2 cores
    python python/scripts/bench_swift.py --pipe-steps 5000 --inproc-steps 20000
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

from hackmatrix.swift_bridge.client import parse_response

ORIGINAL_PIPE_STEPS_PER_SECOND = 570  # the original Swift CLI over its pipe


def bench_in_process(binary: Path, steps: int) -> dict:
    done = subprocess.run(
        [str(binary), "--bench", str(steps)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_pipe(binary: Path, steps: int, policy_seed: int) -> dict:
    """Round trips of reset/step lines through the CLI's stdin/stdout."""
    rng = random.Random(policy_seed)
    proc = subprocess.Popen(
        [str(binary), "--headless-cli"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None

    parse_seconds = 0.0  # time spent parsing responses: the client's share of a round trip

    def request(line: str) -> dict:
        nonlocal parse_seconds
        stdin.write(line.encode() + b"\n")
        stdin.flush()
        raw = stdout.readline()
        before = time.perf_counter()
        response = parse_response(raw)
        parse_seconds += time.perf_counter() - before
        if "error" in response:
            raise RuntimeError(f"{line} -> {response}")
        return response

    episode_seed = 0
    taken = episodes = requests = 0
    start = time.perf_counter()
    try:
        mask = request(f'{{"action":"reset","seed":{episode_seed}}}')["info"]["action_mask"]
        requests += 1
        episodes = 1
        while taken < steps:
            action = rng.choice([a for a, allowed in enumerate(mask) if allowed])
            response = request(f'{{"action":"step","actionIndex":{action}}}')
            requests += 1
            taken += 1
            if response["done"]:
                episode_seed += 1
                mask = request(f'{{"action":"reset","seed":{episode_seed}}}')["info"]["action_mask"]
                requests += 1
                episodes += 1
            else:
                mask = response["info"]["action_mask"]
        seconds = time.perf_counter() - start
    finally:
        stdin.close()
        proc.wait(timeout=30)
    return {
        "steps": taken,
        "episodes": episodes,
        "requests": requests,
        "seconds": seconds,
        "steps_per_second": taken / seconds,
        "requests_per_second": requests / seconds,
        "client_parse_seconds": parse_seconds,
        "client_parse_us_per_request": parse_seconds / requests * 1e6,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--binary",
        type=Path,
        help="the hackmatrix CLI (default: $HACKMATRIX_BINARY or ./swift-build)",
    )
    parser.add_argument("--pipe-steps", type=int, default=30_000)
    parser.add_argument("--inproc-steps", type=int, default=100_000)
    parser.add_argument("--policy-seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("bench_results/bench_swift.json"))
    args = parser.parse_args()

    if args.binary is None:
        from hackmatrix.swift_bridge.binary import find_binary

        args.binary = find_binary(build=True)

    in_process = bench_in_process(args.binary, args.inproc_steps)
    pipe = bench_pipe(args.binary, args.pipe_steps, args.policy_seed)

    rows = [
        (
            "engine, in-process",
            in_process["engine"]["steps"],
            in_process["engine"]["steps_per_second"],
        ),
        (
            "protocol session, in-process",
            in_process["session"]["steps"],
            in_process["session"]["steps_per_second"],
        ),
        ("JSON pipe (Python client)", pipe["steps"], pipe["steps_per_second"]),
        ("original engine, JSON pipe", None, ORIGINAL_PIPE_STEPS_PER_SECOND),
    ]
    print(f"{'path':<32} {'steps':>9} {'steps/s':>11} {'vs original pipe':>17}")
    for name, steps, rate in rows:
        steps_text = "-" if steps is None else str(steps)
        speedup = rate / ORIGINAL_PIPE_STEPS_PER_SECOND
        print(f"{name:<32} {steps_text:>9} {rate:>11.0f} {speedup:>16.1f}x")

    result = {
        "benchmark": "bench_swift",
        "binary": str(args.binary),
        "machine": {
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "load_average_1min": os.getloadavg()[0],
            "python": platform.python_version(),
        },
        "in_process": in_process,
        "pipe": pipe,
        "original_pipe_steps_per_second": ORIGINAL_PIPE_STEPS_PER_SECOND,
        "pipe_speedup_vs_original": pipe["steps_per_second"] / ORIGINAL_PIPE_STEPS_PER_SECOND,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"pipe: parsing in the client took {pipe['client_parse_us_per_request']:.0f} us "
        "per request "
        f"({pipe['client_parse_seconds'] / pipe['seconds']:.0%} of the pipe run); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
