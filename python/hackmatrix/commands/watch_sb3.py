"""Watch an SB3 MaskablePPO model play HackMatrix on the Swift engine (training.md §5.2).

    hackmatrix-watch-sb3 models/<run>/best_model.zip
    hackmatrix-watch-sb3 --latest --episodes 1

`hackmatrix-watch-sb3` is the installed command;
`python python/scripts/watch_trained_agent.py` runs the same `main`.

The board is drawn as text after every step (the env's ansi mode); actions
are deterministic and always passed through the current action mask.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

from hackmatrix.names import ACTION_NAMES
from hackmatrix.swift_bridge.gym_env import HackMatrixEnv

RUN_DIR_PATTERN = re.compile(r"hackmatrix-[a-z]{3}\d{2}-\d{2}-\d+(-.*)?")
CHECKPOINT_PATTERN = re.compile(r"maskable_ppo_hack_(\d+)_steps\.zip")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Watch a trained MaskablePPO agent play (text board).")
    p.add_argument("model_path", nargs="?", type=Path, help="model .zip (or a run directory)")
    p.add_argument(
        "--latest", action="store_true", help="pick the newest run's best model automatically"
    )
    p.add_argument(
        "--model-dir", type=Path, default=Path("./models"), help="where --latest searches"
    )
    p.add_argument("--episodes", type=int, default=3)
    p.add_argument("--max-steps", type=int, default=500)
    p.add_argument(
        "--seed", type=int, default=None, help="seed of the first episode (then seed+1, ...)"
    )
    p.add_argument("--delay", type=float, default=0.0, help="seconds to pause after each step")
    p.add_argument("--quiet", action="store_true", help="print only the per-episode summary")
    p.add_argument(
        "--binary",
        default=None,
        help="Swift CLI (default: $HACKMATRIX_BINARY or ./swift-build output)",
    )
    verbosity = p.add_mutually_exclusive_group()
    verbosity.add_argument("--debug", action="store_true", help="Swift debug logs on stderr")
    verbosity.add_argument("--info", action="store_true", help="Swift info logs on stderr")
    args = p.parse_args(argv)
    if (args.model_path is None) == (not args.latest):
        p.error("give a model path or --latest (not both)")
    return args


def best_file_in(run_dir: Path) -> Path | None:
    """best_model.zip, else interrupted_model.zip, else the newest checkpoint.

    The order of the original project's watcher.
    """
    for name in ("best_model.zip", "interrupted_model.zip"):
        if (run_dir / name).is_file():
            return run_dir / name
    checkpoints = [
        (int(m.group(1)), f)
        for f in run_dir.glob("maskable_ppo_hack_*_steps.zip")
        if (m := CHECKPOINT_PATTERN.fullmatch(f.name))
    ]
    if checkpoints:
        return max(checkpoints)[1]
    for name in ("final_model.zip", "crash_recovery_model.zip"):
        if (run_dir / name).is_file():
            return run_dir / name
    return None


def find_latest_model(model_dir: Path) -> Path:
    """The best file of the most recently modified run directory that has a model."""
    if not model_dir.is_dir():
        raise SystemExit(f"--latest: {model_dir} does not exist")
    runs = sorted(
        (d for d in model_dir.iterdir() if d.is_dir() and RUN_DIR_PATTERN.fullmatch(d.name)),
        key=lambda d: d.stat().st_mtime,
        reverse=True,
    )
    for run in runs:
        found = best_file_in(run)
        if found is not None:
            return found
    raise SystemExit(f"--latest: no model found in any hackmatrix-* run under {model_dir}")


def resolve_model(args) -> Path:
    if args.latest:
        return find_latest_model(args.model_dir)
    path = args.model_path
    if path.is_dir():
        found = best_file_in(path)
        if found is None:
            raise SystemExit(f"{path} holds no model .zip")
        return found
    if not path.is_file():
        raise SystemExit(f"{path} does not exist")
    return path


def play_episode(
    model, env: HackMatrixEnv, seed: int | None, max_steps: int, quiet: bool, delay: float
) -> dict:
    obs, _ = env.reset(seed=seed)
    if not quiet:
        print(env.render())
    total, steps, invalid, terminated = 0.0, 0, 0, False
    while steps < max_steps and not terminated:
        mask = env.action_masks()
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        action = int(np.asarray(action).reshape(()))
        obs, reward, terminated, _, info = env.step(action)
        steps += 1
        total += reward
        invalid += bool(info.get("invalid_action"))
        if not quiet:
            print(
                f"\nstep {steps}: {ACTION_NAMES[action]} ({action})  "
                f"reward {reward:+.3f}  total {total:+.3f}"
            )
            print(env.render())
            if delay:
                time.sleep(delay)
    final_obs = env.observation_json
    assert final_obs is not None  # reset() has run
    outcome = "won" if info.get("game_won") else ("died" if info.get("death") else "step limit")
    return {
        "steps": steps,
        "total_reward": total,
        "invalid_actions": invalid,
        "outcome": outcome,
        "stage": final_obs["stage"],
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    model_path = resolve_model(args)
    import torch

    torch.set_num_threads(1)  # a single forward pass per step: extra threads only add overhead
    from sb3_contrib import MaskablePPO

    print(f"Loading {model_path}")
    model = MaskablePPO.load(model_path, device="cpu")
    level = "debug" if args.debug else ("info" if args.info else None)
    # Engine logs asked for with --debug/--info go straight to our stderr.
    env = HackMatrixEnv(
        render_mode="ansi",
        binary=args.binary,
        log_level=level,
        stderr_log="/dev/stderr" if level else None,
    )
    results = []
    try:
        for episode in range(args.episodes):
            seed = None if args.seed is None else args.seed + episode
            result = play_episode(model, env, seed, args.max_steps, args.quiet, args.delay)
            results.append(result)
            print(
                f"Episode {episode + 1}: {result['steps']} steps, "
                f"total reward {result['total_reward']:.3f}, stage {result['stage']}, "
                f"{result['outcome']}, invalid actions {result['invalid_actions']}"
            )
    except KeyboardInterrupt:
        print("\nstopped")
    finally:
        env.close()
    return 0 if all(r["invalid_actions"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
