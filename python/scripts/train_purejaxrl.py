#!/usr/bin/env python3
"""Train a masked-PPO agent on the HackMatrix JAX engine (PureJaxRL style).

Examples:
    JAX_PLATFORMS=cpu python python/scripts/train_purejaxrl.py --num-envs 64 --no-wandb
    python python/scripts/train_purejaxrl.py --total-timesteps 100000000 \\
        --num-envs 2048 --num-steps 128
    python python/scripts/train_purejaxrl.py --resume            # latest run
See specs/training.md and docs/training-guide.md (python/scripts/train.sh adds
the recommended defaults).
"""

import sys

from hackmatrix.purejaxrl.cli import main

if __name__ == "__main__":
    sys.exit(main())
