#!/usr/bin/env bash
# Runs every check: sets up .venv and builds Swift (setup_env.sh), then the
# linters (ruff check, ruff format --check, mypy) beside the Swift XCTests,
# then pytest over tests/ and parity/, its test files spread over the cores
# (pytest-xdist; HACKMATRIX_TEST_WORKERS=1 runs serially).
# Extra arguments go to pytest (e.g. python/scripts/test.sh -k parity).
#
# python/scripts/test.sh --lint-only [PATH...] runs only the linters: over
# the whole Python tree, or over the given files and directories (mypy then
# checks those of them inside python/hackmatrix, with the project's config).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

# ruff and mypy (pyproject.toml holds their config); any finding fails the run.
lint() {
    local paths=("$@") mypy_targets=() path tool
    for tool in ruff mypy; do
        if [ ! -x ".venv/bin/$tool" ]; then
            echo "[lint] .venv/bin/$tool is missing: run python/scripts/setup_env.sh" >&2
            return 1
        fi
    done
    if [ ${#paths[@]} -eq 0 ]; then
        paths=(.)
    else
        for path in "${paths[@]}"; do
            case "$path" in python/hackmatrix | python/hackmatrix/*) mypy_targets+=("$path") ;; esac
        done
    fi
    echo "[lint] ruff check ${paths[*]}" >&2
    if ! .venv/bin/ruff check --force-exclude "${paths[@]}"; then
        echo "[lint] FAILED: ruff check found problems (.venv/bin/ruff check --fix fixes the safe ones)" >&2
        return 1
    fi
    echo "[lint] ruff format --check ${paths[*]}" >&2
    if ! .venv/bin/ruff format --check --force-exclude "${paths[@]}"; then
        echo "[lint] FAILED: files above are not formatted (.venv/bin/ruff format PATH rewrites them)" >&2
        return 1
    fi
    if [ "${paths[*]}" = "." ]; then
        echo "[lint] mypy (the hackmatrix package)" >&2
        .venv/bin/mypy || { echo "[lint] FAILED: mypy found type errors" >&2; return 1; }
    elif [ ${#mypy_targets[@]} -gt 0 ]; then
        echo "[lint] mypy ${mypy_targets[*]}" >&2
        .venv/bin/mypy "${mypy_targets[@]}" || { echo "[lint] FAILED: mypy found type errors" >&2; return 1; }
    fi
    echo "[lint] clean" >&2
}

if [ "${1:-}" = "--lint-only" ]; then
    shift
    lint "$@"
    exit
fi

source python/scripts/setup_env.sh
# The Swift tests build and run while the linters check: neither needs the other, and on
# a fresh clone each takes most of a minute of a core. Both report before pytest starts.
platform="$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m)"
swift_log="$(mktemp)"
swift test --package-path swift --scratch-path "swift/.build/$platform-tests" > "$swift_log" 2>&1 &
swift_pid=$!
lint_status=0
lint || lint_status=$?
echo "[test] swift test" >&2
swift_status=0
wait "$swift_pid" || swift_status=$?
grep -vE '^\[[0-9]+/[0-9]+\] (Compiling|Emitting|Write|Wrapping|Linking|Planning)' "$swift_log" || true
rm -f "$swift_log"
if [ "$lint_status" -ne 0 ]; then
    exit "$lint_status"
fi
if [ "$swift_status" -ne 0 ]; then
    echo "[test] FAILED: swift test (exit $swift_status)" >&2
    exit "$swift_status"
fi
echo "[test] pytest" >&2
export JAX_PLATFORMS="${JAX_PLATFORMS:-cpu}"
# One compilation cache for every test process: the step compiles once per run.
export JAX_COMPILATION_CACHE_DIR="${JAX_COMPILATION_CACHE_DIR:-$root/.jax_cache}"
export WANDB_MODE="${WANDB_MODE:-offline}"
# Tests compile far more than they run: XLA's LLVM optimizations off cuts the compile time
# (a user's training keeps them; JAX_DISABLE_MOST_OPTIMIZATIONS=0 tests with them on).
export JAX_DISABLE_MOST_OPTIMIZATIONS="${JAX_DISABLE_MOST_OPTIMIZATIONS:-1}"
# Test files run on parallel workers, one per core (at most 4): the suite is mostly XLA
# compiling, which keeps one core busy per program. pytest_workers.py says when not (the
# caller's own -n, --pdb, -s ...); HACKMATRIX_TEST_WORKERS=1 runs serially.
parallel="$(.venv/bin/python python/scripts/pytest_workers.py "$@")"
# shellcheck disable=SC2086 # one argument a line, none with spaces
exec .venv/bin/python -m pytest $parallel "$@"
