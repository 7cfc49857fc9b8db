#!/usr/bin/env bash
# The accelerator checks of issues 49-51, as one script for a short lease (~9 minutes;
# specs/performance.md, "On an NVIDIA H200, issues 49-51"). Each part runs under its own
# time limit and writes its log (and JSON, where the tool writes one) to $OUT as soon
# as it ends, so a lease cut short still returns every part that finished:
#
#   0 devices      the JAX backend and devices (nvidia-smi where there is one)
#   1 shape        the compiled step's fusions and loops, both forms, 8,192 envs
#   2 engine       both forms alternating, 131,072 / 524,288 envs
#   3 graphs       the masked form with XLA's command buffers (CUDA graphs) on
#   4 trainer      the default network's training, 256 / 2,048 envs
#   5 search       the play-time search's moves/s at 8 / 16 simulations
#   6 expert       expert iteration's training throughput (16 simulations a step, 1,024 envs)
#   7 duel         expert iteration (as in 6) against PPO continued (train.sh's recipe), both
#                  from the shipped weights for $DEVICE_CHECKS_DUEL_MINUTES (4) each, seeds
#                  $DEVICE_CHECKS_DUEL_SEEDS (11); each run's last weights to $OUT as .npz, for
#                  evaluate_agent.py --compare on any machine (experiments §49)
# Parts 6 and 7 are not in the default set.
#
# The sizes are what the 2026-11-29 lease left unmeasured (8,192 envs, 1 / 16 / 64
# simulations and part 6 were read then), after the default form became gathered: every
# configuration compiles for 30-55 s on the GPU's host, so a lease fits about ten.
# Part 1 only compiles (it counts the step's pieces), so it runs in the background beside
# the others; the timed parts run one after another, the trainer first (issue 51's
# targets), then the engine, the search, expert iteration and the CUDA graphs.
# Usage (from the repository root, with jax, flax, optax, numpy and mctx importable):
#   OUT=/some/dir python/scripts/device_checks.sh            # the whole set, ~9 minutes
#   DEVICE_CHECKS_SMOKE=1 python/scripts/device_checks.sh    # tiny sizes: checks the script
#   DEVICE_CHECKS_PARTS="2 4" python/scripts/device_checks.sh # only some parts
#   DEVICE_CHECKS_BUNDLE=/dir/all.tgz ...                     # also every result in one archive
# Where mctx is missing, install its wheel first (pip install --no-deps --target DIR mctx-*.whl,
# then PYTHONPATH=DIR); where the machine returns only a few files, set the bundle.
# Python is $PYTHON (default: .venv/bin/python if present, else python3).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
OUT="${OUT:-bench_results/device}"
mkdir -p "$OUT"
if [ -z "${PYTHON:-}" ]; then
    if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
parts="${DEVICE_CHECKS_PARTS:-0 1 2 3 4 5}"
bundle="${DEVICE_CHECKS_BUNDLE:-}"  # a .tgz path: refreshed after every part
duel_seeds="${DEVICE_CHECKS_DUEL_SEEDS:-11}"

if [ -n "${DEVICE_CHECKS_SMOKE:-}" ]; then  # every part at sizes a CPU runs in seconds
    shape_envs=64 engine_envs=64 engine_steps=4 train_envs=16 train_seconds=1
    search_sims="1 2" search_games=4 search_moves=2 graph_envs=64 ei_envs=4 ei_minutes=0.05 limit=900
    duel_minutes=0.05 duel_ppo=(--num-envs 8)
    export JAX_DISABLE_MOST_OPTIMIZATIONS=1  # the masked form compiles for minutes on a CPU
else
    shape_envs=8192 engine_envs="131072 524288" engine_steps=32 train_envs="256 2048"
    train_seconds=6 search_sims="8 16" search_games=256 search_moves=16 graph_envs=8192
    ei_envs=1024 ei_minutes=1.5 duel_minutes="${DEVICE_CHECKS_DUEL_MINUTES:-4}" duel_ppo=() limit=""
fi

# Parts 6 and 7's expert iteration: §45's closest run to PPO (DAgger, the searched move as
# target, env tree, 16 simulations), from the shipped weights.
ckpt="${TMPDIR:-/tmp}/device_checks_ckpt"
from_shipped=(--init-from python/hackmatrix/pretrained/policy.npz --value-trunk separate --program-levers-from-update 0
    --total-timesteps 100000000000 --save-interval 100000 --eval-episodes 0 --no-wandb
    --no-episode-gif --checkpoint-dir "$ckpt")
expert=(--preset expert-iteration --num-envs "$ei_envs" --num-steps 32 --search-acting network
    --search-policy-target argmax --search-tree-reward env --search-simulations 16)

# part NAME SECONDS COMMAND...: run it under its limit, its output to $OUT/NAME.log.
part() {
    local name="$1" seconds="${limit:-$2}"
    shift 2
    echo "[device_checks] $name: $* (limit ${seconds}s) $(date +%T)"
    timeout "$seconds" "$@" >"$OUT/$name.log" 2>&1
    local code=$?
    echo "[device_checks] $name: exit $code $(date +%T)"
    tail -n 25 "$OUT/$name.log"
    if [ -n "$bundle" ]; then  # everything so far in one archive (a lease returns few files)
        tar czf "$bundle.$BASHPID" --exclude "$(basename "$bundle")*" -C "$OUT" . && mv "$bundle.$BASHPID" "$bundle"
    fi
}

wants() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

if wants 0; then
    part 0-devices 60 bash -c "nvidia-smi 2>/dev/null | head -15; $PYTHON -c 'import jax; print(jax.__version__, jax.default_backend(), jax.devices())'"
fi
shape_pid=""
if wants 1; then  # compile only: beside the timed parts (it shares the host's cores, not the GPU)
    (
        export XLA_PYTHON_CLIENT_PREALLOCATE=false  # leave the GPU's memory to the timed parts
        for form in masked gathered; do
            part "1-shape-$form" 150 "$PYTHON" python/scripts/bench_jax_env.py --hlo-stats \
                --step-form "$form" --num-envs $shape_envs --out "$OUT/1-shape-$form.json"
        done
    ) &
    shape_pid=$!
fi
if wants 4; then
    part 4-trainer 130 "$PYTHON" python/scripts/bench_train.py --network grid --num-envs $train_envs \
        --min-seconds "$train_seconds" --output "$OUT/4-trainer.json"
fi
if wants 2; then
    part 2-engine 200 "$PYTHON" python/scripts/bench_jax_env.py --ab-forms --num-envs $engine_envs \
        --steps "$engine_steps" --repeats 3 --out "$OUT/2-engine.json"
fi
if wants 5; then
    params=python/hackmatrix/pretrained/policy.npz
    part 5-search 110 "$PYTHON" python/scripts/bench_search.py --simulations $search_sims \
        --games "$search_games" --moves "$search_moves" --params "$params" --out "$OUT/5-search.json"
fi
if wants 6; then
    part 6-expert 110 "$PYTHON" python/scripts/train_purejaxrl.py "${expert[@]}" "${from_shipped[@]}" \
        --time-limit-minutes "$ei_minutes" --seed 11 --log-interval 1 --run-name device-expert
fi
if wants 7; then  # expert iteration against PPO continued, equal minutes
    duel_limit=$(awk "BEGIN { print int($duel_minutes * 60 + 150) }")
    for seed in $duel_seeds; do
        for run in expert ppo; do
            if [ "$run" = expert ]; then flags=("${expert[@]}"); else flags=("${duel_ppo[@]}"); fi
            part "7-$run-s$seed" "$duel_limit" "$PYTHON" python/scripts/train_purejaxrl.py \
                "${flags[@]}" "${from_shipped[@]}" --time-limit-minutes "$duel_minutes" \
                --seed "$seed" --log-interval 5 --run-name "duel-$run-s$seed"
            # the last save's weights (KBs, not the checkpoint's env batch)
            part "7-export-duel-$run-s$seed" 60 "$PYTHON" python/scripts/export_params.py \
                "$ckpt/duel-$run-s$seed" "$OUT/7-duel-$run-s$seed.npz"
        done
    done
fi
if wants 3; then
    XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN,CUSTOM_CALL,CONDITIONAL,WHILE" \
        part 3-graphs 120 "$PYTHON" python/scripts/bench_jax_env.py --step-form masked \
        --num-envs $graph_envs --steps "$engine_steps" --repeats 3 --out "$OUT/3-graphs.json"
fi
[ -n "$shape_pid" ] && wait "$shape_pid"
echo "[device_checks] done $(date +%T): $OUT"
