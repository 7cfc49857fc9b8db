#!/usr/bin/env bash
# Creates (or refreshes) the project's virtualenv in .venv, installs the
# package with every extra, and builds the Swift CLI. Idempotent and quiet on
# repeat runs. Sourced by train.sh and test.sh; runnable on its own.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "[setup] creating virtualenv in .venv" >&2
    "$python" -m venv .venv
fi
# Reinstall only when pyproject.toml changed since the last install.
stamp=.venv/.hackmatrix-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "[setup] installing hackmatrix and its dependencies (torch==2.13.0 CPU)" >&2
    .venv/bin/python -m pip install -q --upgrade pip >&2
    # A local CPU wheel of torch, where the machine has one, avoids a multi-GB download.
    find_links=()
    for d in /opt/wheels "${HACKMATRIX_WHEELS:-}"; do
        [ -n "$d" ] && [ -d "$d" ] && find_links+=(--find-links "$d")
    done
    # ${a[@]+...}: an empty array expands to nothing under set -u in bash 3.2 (macOS) too.
    .venv/bin/python -m pip install -q ${find_links[@]+"${find_links[@]}"} -e ".[all]" >&2
    touch "$stamp"
fi
echo "[setup] building the Swift CLI" >&2
HACKMATRIX_BINARY_BUILT="$(./swift-build | tail -1)"
export HACKMATRIX_BINARY="${HACKMATRIX_BINARY:-$HACKMATRIX_BINARY_BUILT}"
echo "[setup] Swift CLI: $HACKMATRIX_BINARY_BUILT" >&2
