#!/usr/bin/env python3
"""Make a trained checkpoint the policy that ships with the project.

    python python/scripts/ship_policy.py checkpoints/<run>/checkpoint_1220.pkl

Writes python/hackmatrix/pretrained/policy.npz (the parameters, dotted keys) and
policy.json (the run's training config and where the policy came from: run, update,
environment steps, the parameters' sha256). The model card (MODEL_CARD.md beside
them) is prose: update its evaluation table by hand from `hackmatrix-evaluate
--pretrained --search 16 --episodes 1024` (the card says which numbers to run).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path, help="a run's checkpoint_N.pkl")
    parser.add_argument(
        "--command",
        default=None,
        help="the command that trained the run, recorded in policy.json",
    )
    args = parser.parse_args(argv)

    from hackmatrix.pretrained import PRETRAINED_CONFIG, PRETRAINED_PARAMS
    from hackmatrix.purejaxrl.checkpoint import CheckpointError, export_policy

    if args.checkpoint.suffix != ".pkl":
        parser.error(f"{args.checkpoint}: give a checkpoint_N.pkl (it carries the run's config)")
    try:
        record = export_policy(
            args.checkpoint, PRETRAINED_PARAMS, command=args.command, date_key="shipped"
        )
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    size = PRETRAINED_PARAMS.stat().st_size
    digest = record["source"]["params_sha256"]
    print(f"wrote {PRETRAINED_PARAMS} ({size / 1024:.0f} KiB, sha256 {digest[:12]}...)")
    print(f"wrote {PRETRAINED_CONFIG}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
