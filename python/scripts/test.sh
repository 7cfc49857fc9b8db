#!/usr/bin/env bash
# Runs every test: sets up .venv and builds Swift (setup_env.sh), then the
# Swift XCTests, then pytest over tests/ and parity/.
# Extra arguments go to pytest (e.g. python/scripts/test.sh -k parity).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
source python/scripts/setup_env.sh
platform="$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m)"
echo "[test] swift test" >&2
swift test --package-path swift --scratch-path "swift/.build/$platform-tests" 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\] (Compiling|Emitting|Write|Wrapping|Linking|Planning)' 
echo "[test] pytest" >&2
export JAX_PLATFORMS="${JAX_PLATFORMS:-cpu}"
# One compilation cache for every test process: the step compiles once per run.
export JAX_COMPILATION_CACHE_DIR="${JAX_COMPILATION_CACHE_DIR:-$root/.jax_cache}"
export WANDB_MODE="${WANDB_MODE:-offline}"
exec .venv/bin/python -m pytest "$@"
