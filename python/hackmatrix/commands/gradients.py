"""Where a checkpoint's PPO gradient goes: policy, value and entropy parts (training.md §3.8).

    hackmatrix-gradients checkpoints/<run>                       # its latest checkpoint
    hackmatrix-gradients checkpoints/<run>/checkpoint_992.pkl --rollouts 4 --json parts.json

Plays fresh rollouts from the checkpoint's own env batch (its parameters fixed, with the
inputs its next update would get) and prints, per loss term, the median gradient norm over
the minibatch steps, over all layers and over the layers the policy and value share; the
value/policy ratio and their cosine there; and how many steps `max_grad_norm` clips.
`python python/scripts/diagnose_gradients.py` runs the same `main`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="hackmatrix-gradients",
        description="Split a checkpoint's PPO gradient into its policy, value and entropy parts.",
    )
    p.add_argument(
        "checkpoint",
        type=Path,
        metavar="CHECKPOINT",
        help="a checkpoint_*.pkl or a run directory (its latest checkpoint)",
    )
    p.add_argument(
        "--rollouts",
        type=int,
        default=2,
        help="fresh rollouts to take the minibatches from (default 2)",
    )
    p.add_argument("--seed", type=int, default=0, help="key of the minibatch shuffle (default 0)")
    p.add_argument("--json", type=Path, default=None, help="write every minibatch's numbers here")
    p.add_argument("--env-module", default="hackmatrix.jax_env", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.rollouts < 1:
        p.error(f"--rollouts must be at least 1, got {args.rollouts}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    from hackmatrix.purejaxrl import curriculum_flags
    from hackmatrix.purejaxrl.checkpoint import (
        CheckpointError,
        latest_checkpoint,
        load_checkpoint,
        restore_runner,
    )

    try:
        path = latest_checkpoint(args.checkpoint) if args.checkpoint.is_dir() else args.checkpoint
        if path.suffix != ".pkl":
            raise CheckpointError(
                f"{path}: needs a checkpoint_*.pkl (it holds the env batch and the config), "
                "not a parameters file"
            )
        payload = load_checkpoint(path)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    import jax

    from hackmatrix.analysis.gradients import format_report, gradient_parts
    from hackmatrix.purejaxrl.cli import curriculum_env_params, load_env
    from hackmatrix.purejaxrl.config import TrainConfig
    from hackmatrix.purejaxrl.device import enable_compilation_cache, to_host
    from hackmatrix.purejaxrl.train import make_train, place_runner_state

    enable_compilation_cache()
    config = TrainConfig.from_dict(payload["config"])
    if config.algorithm != "ppo":  # the split below is of PPO's loss
        print(
            f"error: {path} was trained with --algorithm {config.algorithm}; "
            "hackmatrix-gradients splits PPO's loss only",
            file=sys.stderr,
        )
        return 2
    env = load_env(args.env_module)
    step = int(payload["step"])
    curriculum = curriculum_flags.resolve(config)
    trainer = make_train(config, env, curriculum_env_params(config, env, curriculum, step))
    # The inputs of the checkpoint's next update: row 0 of the chunk starting there.
    inputs = jax.tree_util.tree_map(lambda x: x[0], trainer.chunk_inputs(step))
    runner = trainer.init(jax.random.PRNGKey(config.seed))
    try:
        runner, _ = restore_runner(path, payload, to_host(runner))
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    runner = place_runner_state(trainer, runner)
    report = gradient_parts(trainer, runner, inputs, rollouts=args.rollouts, seed=args.seed)
    print(format_report(report, f"{path} (update {payload['step']})"))
    if args.json is not None:
        args.json.write_text(json.dumps({"checkpoint": str(path), **dataclasses.asdict(report)}))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
