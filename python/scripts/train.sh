#!/usr/bin/env bash
# Trains a masked-PPO agent on the JAX engine with sensible defaults for the
# machine it runs on: sets up .venv and builds Swift (setup_env.sh), then runs
# train_purejaxrl.py. Extra arguments go to the trainer, e.g.
#   python/scripts/train.sh --total-timesteps 100000000 --num-envs 2048
# Settings that differ from the trainer's own defaults, each chosen in
# equal-budget runs (specs/learning.md §6, §11, §20, §28, §37):
#   --ent-coef 0.05   always; a later flag wins (train.sh --ent-coef 0.15).
#   --vf-coef 0.1     always; a later flag wins (train.sh --vf-coef 0.5).
#   --network grid    on a fresh run without --network (train.sh --network mlp).
#   the staged reward, on a fresh run that names no reward option:
#     --reward-weights siphon_death_penalty=0.3 --siphon-pay-on-use
#     --program-bonus 4 --free-program-spending --ent-coef-programs 0.5
#     --program-levers-from-update 120
#   (the siphon priced lighter and paid when spent, from the start; from update
#   120 programs are paid for, free to run, and the choice to run one gets an
#   entropy bonus). Any reward flag (--reward-weights, --program-*,
#   --free-program-spending, --distance-shaping) replaces all of them:
#   train.sh --reward-weights none trains on the canonical reward;
#   --no-siphon-pay-on-use or --ent-coef-programs 0 drops just that part.
# A resume keeps the checkpoint's network and reward; PPO's coefficients
# are the command line's, so a resume gets the two above too (specs/training.md §4.4).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
source python/scripts/setup_env.sh
defaults=(--ent-coef 0.05 --vf-coef 0.1)
case " $* " in
  *" --resume"* | *" --network"*) ;;
  *) defaults+=(--network grid) ;;
esac
case " $* " in
  *" --resume"* | *" --reward-weights"* | *" --program-"* | *"-free-program-spending"*) ;;
  *" --distance-shaping"*) ;;
  *)
    defaults+=(--reward-weights siphon_death_penalty=0.3 --siphon-pay-on-use)
    defaults+=(--program-bonus 4 --free-program-spending --ent-coef-programs 0.5)
    defaults+=(--program-levers-from-update 120)
    ;;
esac
exec .venv/bin/python python/scripts/train_purejaxrl.py "${defaults[@]}" "$@"
