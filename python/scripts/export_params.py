#!/usr/bin/env python3
"""Copy a run's weights out as a small `.npz` with its config beside it.

    python python/scripts/export_params.py checkpoints/<run> out/run.npz
    python python/scripts/export_params.py checkpoints/<run>/checkpoint_40.pkl out/run.npz

A checkpoint carries the optimizer state and the env batch too (tens of MB at
thousands of envs); the export is the parameters (~0.6 MB for train.sh's grid
network) and a same-named `.json` with the run's config and where they came from,
which every tool that takes a policy reads (`evaluate_agent.py --compare
out/run.npz pretrained`). What a lent machine copies back after training there.
A run directory means its latest checkpoint.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="a run directory or a checkpoint_N.pkl")
    parser.add_argument("out", type=Path, help="the .npz to write (its .json goes beside it)")
    args = parser.parse_args(argv)
    if args.out.suffix != ".npz":
        parser.error(f"{args.out}: the output must be a .npz")

    from hackmatrix.purejaxrl.checkpoint import CheckpointError, export_policy, resolve_params_path

    try:
        checkpoint = resolve_params_path(args.source)  # a run directory: its latest checkpoint
        if checkpoint.suffix != ".pkl":
            raise CheckpointError(f"{checkpoint}: give a run directory or a checkpoint_N.pkl")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        record = export_policy(checkpoint, args.out)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    source = record["source"]
    print(
        f"{checkpoint}: update {source['update']}, {source['env_steps']:,} env steps -> "
        f"{args.out} ({args.out.stat().st_size / 1024:.0f} KiB) and {args.out.with_suffix('.json')}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
