#!/usr/bin/env bash
# The accelerator checks of issues 49-51, as one script for a short lease
# (specs/performance.md, "Left for the next GPU lease"). Each part runs under its own
# time limit and writes its log (and JSON, where the tool writes one) to $OUT as soon
# as it ends, so a lease cut short still returns every part that finished:
#
#   0 devices      the JAX backend and devices (nvidia-smi where there is one)
#   1 shape        the compiled step's fusions and loops, both forms, 8,192 envs
#   2 engine       both forms alternating, 8,192 / 131,072 / 524,288 envs
#   3 graphs       the masked form with XLA's command buffers (CUDA graphs) on
#   4 trainer      the default network's training, 256 / 2,048 / 16,384 envs
#   5 search       the play-time search's moves/s at 1 / 8 / 16 / 64 simulations
#
# Usage (from the repository root, with jax, flax, optax, numpy and mctx importable):
#   OUT=/some/dir python/scripts/device_checks.sh            # the whole set, ~12 minutes
#   DEVICE_CHECKS_SMOKE=1 python/scripts/device_checks.sh    # tiny sizes: checks the script
#   DEVICE_CHECKS_PARTS="2 4" python/scripts/device_checks.sh # only some parts
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

if [ -n "${DEVICE_CHECKS_SMOKE:-}" ]; then  # every part at sizes a CPU runs in seconds
    shape_envs=64 engine_envs=64 engine_steps=4 train_envs=16 train_seconds=1
    search_sims="1 2" search_games=4 search_moves=2 limit=900
    export JAX_DISABLE_MOST_OPTIMIZATIONS=1  # the masked form compiles for minutes on a CPU
else
    shape_envs=8192 engine_envs="8192 131072 524288" engine_steps=32 train_envs="256 2048 16384"
    train_seconds=10 search_sims="1 8 16 64" search_games=256 search_moves=16 limit=""
fi

# part NAME SECONDS COMMAND...: run it under its limit, its output to $OUT/NAME.log.
part() {
    local name="$1" seconds="${limit:-$2}"
    shift 2
    echo "[device_checks] $name: $* (limit ${seconds}s) $(date +%T)"
    timeout "$seconds" "$@" >"$OUT/$name.log" 2>&1
    local code=$?
    echo "[device_checks] $name: exit $code $(date +%T)"
    tail -n 25 "$OUT/$name.log"
}

wants() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

if wants 0; then
    part 0-devices 60 bash -c "nvidia-smi 2>/dev/null | head -15; $PYTHON -c 'import jax; print(jax.__version__, jax.default_backend(), jax.devices())'"
fi
if wants 1; then
    for form in masked gathered; do
        part "1-shape-$form" 150 "$PYTHON" python/scripts/bench_jax_env.py --hlo-stats \
            --step-form "$form" --num-envs $shape_envs
    done
fi
if wants 2; then
    part 2-engine 200 "$PYTHON" python/scripts/bench_jax_env.py --ab-forms --num-envs $engine_envs \
        --steps "$engine_steps" --repeats 3 --out "$OUT/2-engine.json"
fi
if wants 3; then
    XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN,CUSTOM_CALL,CONDITIONAL,WHILE" \
        part 3-graphs 120 "$PYTHON" python/scripts/bench_jax_env.py --step-form masked \
        --num-envs $engine_envs --steps "$engine_steps" --repeats 3 --out "$OUT/3-graphs.json"
fi
if wants 4; then
    part 4-trainer 200 "$PYTHON" python/scripts/bench_train.py --network grid --num-envs $train_envs \
        --min-seconds "$train_seconds" --output "$OUT/4-trainer.json"
fi
if wants 5; then
    params=python/hackmatrix/pretrained/policy.npz
    part 5-search 150 "$PYTHON" python/scripts/bench_search.py --simulations $search_sims \
        --games "$search_games" --moves "$search_moves" --params "$params" --out "$OUT/5-search.json"
fi
echo "[device_checks] done $(date +%T): $OUT"
