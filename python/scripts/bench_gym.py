#!/usr/bin/env python3
"""Steps per second through the Swift-backed Gymnasium env and the SB3 trainer.

Rows:
  cli_client      SwiftEngine.step in a loop (JSON round trip only, no encoding)
  gym_env         HackMatrixEnv.step with a random masked policy, 1 process
  subproc_vec_N   SB3 SubprocVecEnv with N env processes, random masked policy
  sb3_maskable_ppo MaskablePPO.learn (rollouts + updates), 1 env, small config

The original implementation's SB3 path ran at about 570 steps/s; that figure
is printed alongside. Each row runs for about --seconds of wall time.

    python python/scripts/bench_gym.py --seconds 5 --num-envs 2 4
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from hackmatrix.swift_bridge.binary import find_binary

ORIGINAL_STEPS_PER_SECOND = 570.0


def bench_cli(binary: str, seconds: float) -> dict:
    from hackmatrix.swift_bridge.client import SwiftEngine

    rng = np.random.default_rng(0)
    steps = episodes = 0
    with SwiftEngine(binary) as engine:
        mask = np.array(engine.reset(seed=0)["info"]["action_mask"])
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            response = engine.step(int(rng.choice(np.flatnonzero(mask))))
            steps += 1
            if response["done"]:
                episodes += 1
                response = engine.reset(seed=episodes)
            mask = np.array(response["info"]["action_mask"])
        elapsed = time.perf_counter() - start
    return {"steps": steps, "seconds": elapsed, "episodes": episodes}


def bench_gym(binary: str, seconds: float) -> dict:
    from hackmatrix.swift_bridge.gym_env import HackMatrixEnv

    rng = np.random.default_rng(0)
    steps = episodes = 0
    env = HackMatrixEnv(binary=binary)
    try:
        env.reset(seed=0)
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            _, _, terminated, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            steps += 1
            if terminated:
                episodes += 1
                env.reset()
        elapsed = time.perf_counter() - start
    finally:
        env.close()
    return {"steps": steps, "seconds": elapsed, "episodes": episodes}


def _make_env(binary: str):
    def make():
        from hackmatrix.swift_bridge.gym_env import HackMatrixEnv

        return HackMatrixEnv(binary=binary)

    return make


def bench_subproc(binary: str, seconds: float, num_envs: int) -> dict:
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import SubprocVecEnv

    rng = np.random.default_rng(0)
    vec = SubprocVecEnv([_make_env(binary) for _ in range(num_envs)])
    steps = 0
    try:
        vec.seed(0)
        vec.reset()
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            masks = get_action_masks(vec)
            vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
            steps += num_envs
        elapsed = time.perf_counter() - start
    finally:
        vec.close()
    return {"steps": steps, "seconds": elapsed, "num_envs": num_envs}


def bench_ppo(binary: str, seconds: float) -> dict:
    """MaskablePPO.learn on one env; n_steps 512, 4 epochs of batch 64.

    About the seed config's ratio of steps to updates.
    """
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    vec = DummyVecEnv([_make_env(binary)])
    try:
        model = MaskablePPO(
            "MultiInputPolicy",
            vec,
            n_steps=512,
            batch_size=64,
            n_epochs=4,
            seed=0,
            device="cpu",
            policy_kwargs={"net_arch": {"pi": [256, 256, 128], "vf": [256, 256, 128]}},
        )
        model.learn(512)  # warm-up: first rollout and update
        steps = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            model.learn(512, reset_num_timesteps=False)
            steps += 512
        elapsed = time.perf_counter() - start
    finally:
        vec.close()
    return {"steps": steps, "seconds": elapsed, "n_steps": 512, "n_epochs": 4, "batch_size": 64}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=5.0, help="wall time per row")
    p.add_argument(
        "--num-envs", type=int, nargs="*", default=[2], help="SubprocVecEnv sizes to measure"
    )
    p.add_argument("--skip-ppo", action="store_true")
    p.add_argument("--binary", default=None)
    p.add_argument("--out", type=Path, default=Path("bench_results/bench_gym.json"))
    args = p.parse_args(argv)
    if args.seconds <= 0 or any(n < 1 for n in args.num_envs):
        p.error("--seconds must be positive and --num-envs at least 1")
    binary = str(Path(args.binary).resolve() if args.binary else find_binary())

    rows = {
        "cli_client": bench_cli(binary, args.seconds),
        "gym_env": bench_gym(binary, args.seconds),
    }
    for n in args.num_envs:
        rows[f"subproc_vec_{n}"] = bench_subproc(binary, args.seconds, n)
    if not args.skip_ppo:
        rows["sb3_maskable_ppo"] = bench_ppo(binary, args.seconds)
    for row in rows.values():
        row["steps_per_second"] = row["steps"] / row["seconds"]
        row["vs_original"] = row["steps_per_second"] / ORIGINAL_STEPS_PER_SECOND

    print(f"{'measurement':<18} {'steps':>8} {'seconds':>8} {'steps/s':>10} {'vs 570/s':>9}")
    for name, row in rows.items():
        print(
            f"{name:<18} {row['steps']:>8} {row['seconds']:>8.2f} {row['steps_per_second']:>10.1f} "
            f"{row['vs_original']:>8.2f}x"
        )
    print(f"(original SB3 path: ~{ORIGINAL_STEPS_PER_SECOND:.0f} steps/s)")

    result = {
        "benchmark": "bench_gym",
        "binary": binary,
        "machine": {
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "load_average": os.getloadavg(),
            "python": platform.python_version(),
        },
        "seconds_per_row": args.seconds,
        "original_steps_per_second": ORIGINAL_STEPS_PER_SECOND,
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
