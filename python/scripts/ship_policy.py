#!/usr/bin/env python3
"""Make a trained checkpoint the policy that ships with the project.

    python python/scripts/ship_policy.py checkpoints/<run>/checkpoint_1220.pkl

Writes python/hackmatrix/pretrained/policy.npz (the parameters, dotted keys) and
policy.json (the run's training config and where the policy came from: run, update,
environment steps, the parameters' sha256). The model card (MODEL_CARD.md beside
them) is prose: update its evaluation table by hand from `hackmatrix-evaluate
--pretrained --search 16 --episodes 1024` (the card says which numbers to run).

    python python/scripts/ship_policy.py checkpoints/<run>/checkpoint_190.pkl \
        --value-from checkpoints/<other run>/checkpoint_190.pkl

ships one network with the first checkpoint's policy and the second's value (a value
trunk of its own holding the other run's value layers), so that `--pretrained`
searches with that pair and the network alone plays the first checkpoint's policy
(specs/experiments/74). The two must be grid networks of the same sizes whose values
mean the same (discount, scale, reward).
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
    parser.add_argument(
        "--value-from",
        type=Path,
        default=None,
        metavar="CHECKPOINT",
        help="a checkpoint_N.pkl whose value the shipped network takes (its policy stays "
        "the first checkpoint's)",
    )
    args = parser.parse_args(argv)

    from hackmatrix.pretrained import PRETRAINED_CONFIG, PRETRAINED_PARAMS
    from hackmatrix.purejaxrl.checkpoint import CheckpointError, export_policy

    if args.checkpoint.suffix != ".pkl":
        parser.error(f"{args.checkpoint}: give a checkpoint_N.pkl (it carries the run's config)")
    if args.value_from is not None and args.value_from.suffix != ".pkl":
        parser.error(f"--value-from {args.value_from}: give a checkpoint_N.pkl")
    try:
        record = export_policy(
            args.checkpoint,
            PRETRAINED_PARAMS,
            command=args.command,
            date_key="shipped",
            value_checkpoint=args.value_from,
        )
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    size = PRETRAINED_PARAMS.stat().st_size
    digest = record["source"]["params_sha256"]
    print(f"wrote {PRETRAINED_PARAMS} ({size / 1024:.0f} KiB, sha256 {digest[:12]}...)")
    print(f"wrote {PRETRAINED_CONFIG}")
    if "value_source" in record:
        value = record["value_source"]
        print(f"its value is {value['run']}/{value['checkpoint']}'s (update {value['update']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
