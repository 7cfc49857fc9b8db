#!/usr/bin/env bash
# Trains a masked-PPO agent on the JAX engine with sensible defaults for the
# machine it runs on: sets up .venv and builds Swift (setup_env.sh), then runs
# train_purejaxrl.py. Extra arguments go to the trainer, e.g.
#   python/scripts/train.sh --total-timesteps 100000000 --num-envs 2048
# It trains with --ent-coef 0.05, which walked further than the seeds' 0.15
# in equal-budget runs (specs/learning.md §6); a later --ent-coef wins.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
source python/scripts/setup_env.sh
exec .venv/bin/python python/scripts/train_purejaxrl.py --ent-coef 0.05 "$@"
