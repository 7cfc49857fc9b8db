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
import datetime
import hashlib
import json
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
    from hackmatrix.purejaxrl.checkpoint import (
        CheckpointError,
        load_checkpoint,
        save_params_npz,
    )

    if args.checkpoint.suffix != ".pkl":
        parser.error(f"{args.checkpoint}: give a checkpoint_N.pkl (it carries the run's config)")
    try:
        checkpoint = load_checkpoint(args.checkpoint)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    save_params_npz(PRETRAINED_PARAMS, checkpoint["params"])
    digest = hashlib.sha256(PRETRAINED_PARAMS.read_bytes()).hexdigest()
    record = {
        "source": {
            "run": args.checkpoint.parent.name,
            "checkpoint": args.checkpoint.name,
            "update": int(checkpoint["step"]),
            "env_steps": int(checkpoint.get("timesteps", 0)),
            "command": args.command,
            "shipped": datetime.date.today().isoformat(),
            "params_sha256": digest,
        },
        "config": dict(checkpoint["config"]),
    }
    PRETRAINED_CONFIG.write_text(json.dumps(record, indent=2, sort_keys=True, default=str) + "\n")
    size = PRETRAINED_PARAMS.stat().st_size
    print(f"wrote {PRETRAINED_PARAMS} ({size / 1024:.0f} KiB, sha256 {digest[:12]}...)")
    print(f"wrote {PRETRAINED_CONFIG}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
