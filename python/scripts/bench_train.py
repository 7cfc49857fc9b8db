#!/usr/bin/env python3
"""End-to-end training throughput of the JAX masked-PPO trainer.

For each num_envs: compile time of one chunk, then env steps per second of
whole PPO updates (rollout + GAE + epochs), timed over at least
--min-seconds after one warm-up chunk. Prints a table and writes
bench_results/bench_train.json.

    JAX_PLATFORMS=cpu python python/scripts/bench_train.py             # 64, 256, 2048
    JAX_PLATFORMS=cpu python python/scripts/bench_train.py --num-envs 2048 --cpu-devices 2
    python python/scripts/bench_train.py --num-envs 2048 8192 32768    # on a GPU/TPU
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

from hackmatrix.host_devices import request_cpu_devices

BASELINE_STEPS_PER_SECOND = 5_400  # the original trainer on this class of CPU (seed figure)


def bench_one(env, num_envs: int, args) -> dict:
    import jax

    from hackmatrix.purejaxrl.config import TrainConfig, auto_scale_for_batch_size
    from hackmatrix.purejaxrl.train import make_mesh, make_train

    config = TrainConfig(
        num_envs=num_envs,
        num_steps=args.num_steps,
        log_interval=args.chunk,
        hidden_dim=args.hidden_dim,
        bf16=args.bf16,
        network=args.network,
    )
    auto_scale_for_batch_size(config)
    trainer = make_train(config, env, mesh=make_mesh(jax.devices()))
    runner = trainer.init(jax.random.PRNGKey(0))

    start = time.perf_counter()
    compiled = trainer.train_chunk.lower(runner, args.chunk).compile()
    compile_seconds = time.perf_counter() - start

    runner, metrics = compiled(runner, args.chunk)  # warm-up
    jax.block_until_ready(metrics)
    chunks, start, cpu_start = 0, time.perf_counter(), time.process_time()
    while True:
        runner, metrics = compiled(runner, args.chunk)
        jax.block_until_ready(metrics)
        chunks += 1
        elapsed = time.perf_counter() - start
        if elapsed >= args.min_seconds:
            break
    cpu_seconds = time.process_time() - cpu_start
    steps = chunks * args.chunk * config.batch_size
    return {
        "num_envs": num_envs,
        "num_steps": config.num_steps,
        "batch_size": config.batch_size,
        "num_minibatches": config.num_minibatches,
        "update_epochs": config.update_epochs,
        "hidden_dim": config.hidden_dim,
        "bf16": config.bf16,
        "network": config.network,
        "compile_seconds": round(compile_seconds, 2),
        "timed_seconds": round(elapsed, 2),
        "updates": chunks * args.chunk,
        "env_steps": steps,
        "steps_per_second": round(steps / elapsed, 1),
        "updates_per_second": round(chunks * args.chunk / elapsed, 3),
        # Process CPU time (all threads) per env step: on a shared machine it
        # moves far less with the neighbours' load than the wall-clock rate.
        "cpu_us_per_step": round(cpu_seconds / steps * 1e6, 2),
        "loadavg_1min_after": round(os.getloadavg()[0], 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, nargs="+", default=[64, 256, 2048])
    parser.add_argument("--num-steps", type=int, default=128)
    parser.add_argument("--hidden-dim", type=int, default=256)
    parser.add_argument("--chunk", type=int, default=1, help="updates per compiled call")
    parser.add_argument("--min-seconds", type=float, default=5.0)
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--network", choices=("mlp", "grid"), default="mlp")
    parser.add_argument("--env-module", default="hackmatrix.jax_env")
    parser.add_argument("--output", default="bench_results/bench_train.json")
    parser.add_argument(
        "--cpu-devices",
        type=int,
        default=1,
        help="split a CPU host into this many XLA devices; the env batch is "
        "sharded over them (data parallel, specs/performance.md)",
    )
    args = parser.parse_args()
    if args.cpu_devices > 1 and not request_cpu_devices(args.cpu_devices):
        print("note: XLA_FLAGS already sets a device count; --cpu-devices ignored", file=sys.stderr)

    import importlib

    import jax

    from hackmatrix.purejaxrl.device import describe_devices, enable_compilation_cache

    enable_compilation_cache()
    env = importlib.import_module(args.env_module)
    devices = describe_devices()
    results = []
    print(
        f"device: {devices['device_type']} x{devices['device_count']} ({devices['device_kind']}), "
        f"jax {jax.__version__}, game {args.env_module}, network {args.network}"
    )
    header = (
        f"{'num_envs':>8} {'batch':>9} {'mb x ep':>8} {'compile s':>10} {'steps/s':>12} "
        f"{'vs 5.4k':>8} {'cpu us/step':>12} {'load':>6}"
    )
    print(header)
    print("-" * len(header))
    for num_envs in args.num_envs:
        row = bench_one(env, num_envs, args)
        results.append(row)
        print(
            f"{num_envs:>8} {row['batch_size']:>9,} "
            f"{row['num_minibatches']:>3} x {row['update_epochs']:<2}  "
            f"{row['compile_seconds']:>10.1f} {row['steps_per_second']:>12,.0f} "
            f"{row['steps_per_second'] / BASELINE_STEPS_PER_SECOND:>7.1f}x"
            f" {row['cpu_us_per_step']:>12.1f} {row['loadavg_1min_after']:>6.1f}",
            flush=True,
        )
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "benchmark": "bench_train",
                "devices": devices,
                "jax_version": jax.__version__,
                "machine": platform.machine(),
                "processor": platform.processor(),
                "game": args.env_module,
                "baseline_steps_per_second": BASELINE_STEPS_PER_SECOND,
                "results": results,
            },
            indent=2,
        )
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
