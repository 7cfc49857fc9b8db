#!/usr/bin/env python3
"""Train a masked-PPO agent on the HackMatrix JAX engine (PureJaxRL style).

Examples:
    JAX_PLATFORMS=cpu python python/scripts/train_purejaxrl.py --num-envs 64 --no-wandb
    python python/scripts/train_purejaxrl.py --total-timesteps 100000000 \\
        --num-envs 2048 --num-steps 128
    python python/scripts/train_purejaxrl.py --resume            # latest run
    python python/scripts/train_purejaxrl.py --preset canonical  # the bare option defaults
    python python/scripts/train_purejaxrl.py --print-config      # what a command would train
The run starts from the `default` preset, the recommended recipe (python/scripts/train.sh
runs this script after setting up .venv). See specs/training.md, docs/training-guide.md
and docs/reference/trainer-flags.md.
"""

import sys

from hackmatrix.purejaxrl.cli import main

if __name__ == "__main__":
    sys.exit(main())
