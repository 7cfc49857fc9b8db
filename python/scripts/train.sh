#!/usr/bin/env bash
# Trains a masked-PPO agent on the JAX engine: sets up .venv and builds Swift
# (setup_env.sh), then runs train_purejaxrl.py with every argument unchanged, e.g.
#   python/scripts/train.sh --total-timesteps 100000000 --num-envs 2048
# The recommended recipe is the trainer's own default preset
# (python/hackmatrix/purejaxrl/presets/default.toml), so this script, train_purejaxrl.py
# and hackmatrix-train-jax train the same run; --preset canonical gives the bare option
# defaults, --preset gpu the default at 2,048 envs. Every flag, its default and the
# presets' values: docs/reference/trainer-flags.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
source python/scripts/setup_env.sh
exec .venv/bin/python python/scripts/train_purejaxrl.py "$@"
