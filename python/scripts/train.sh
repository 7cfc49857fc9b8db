#!/usr/bin/env bash
# Trains a masked-PPO agent on the JAX engine with sensible defaults for the
# machine it runs on: sets up .venv and builds Swift (setup_env.sh), then runs
# train_purejaxrl.py. Extra arguments go to the trainer, e.g.
#   python/scripts/train.sh --total-timesteps 100000000 --num-envs 2048
# Two settings differ from the trainer's own defaults, each the better one in
# equal-budget runs (specs/learning.md §6 and §11); a later flag wins:
#   --ent-coef 0.05   (the seeds' 0.15: train.sh --ent-coef 0.15)
#   --network grid    (the flat MLP: train.sh --network mlp); left out on a
#                     resume, which keeps the checkpoint's network.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
source python/scripts/setup_env.sh
defaults=(--ent-coef 0.05)
case " $* " in
  *" --resume"* | *" --network"*) ;;
  *) defaults+=(--network grid) ;;
esac
exec .venv/bin/python python/scripts/train_purejaxrl.py "${defaults[@]}" "$@"
