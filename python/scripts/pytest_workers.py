"""Prints the pytest-xdist arguments test.sh adds to a pytest run, one per line.

The suite's time is mostly XLA compiling (specs/performance.md, "The test suite's time"),
and XLA compiles one program on one core, so test files run on parallel workers: one
worker per usable core, at most MAX_WORKERS. `--dist loadfile` keeps each file on one
worker, so a module's fixtures (a finished training run, a compiled trainer) are built
once. `--no-loadscope-reorder` hands the files out in collection order, which
tests/conftest.py puts heaviest first so the workers finish together. The compilation
cache directory is shared, so a program one worker compiled is read by the other.

Nothing is added (a serial run) when:
- HACKMATRIX_TEST_WORKERS is 1 (or the machine has one usable core);
- pytest-xdist is not installed;
- the caller's own arguments already choose workers (-n, --numprocesses, --dist,
  -p no:xdist) or need one process (--pdb, --trace, -s / --capture=no, --collect-only).

Usage: pytest_workers.py [PYTEST_ARG ...]; a bad HACKMATRIX_TEST_WORKERS exits 2 with a
message on stderr.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence

MAX_WORKERS = 4
ENV_VAR = "HACKMATRIX_TEST_WORKERS"

# Arguments that pick workers themselves, or that only make sense in one process (-s, alone
# or run together with other one-letter flags, is found by _short_flags_include_s).
_SERIAL_FLAGS = ("--pdb", "--trace", "--capture=no", "--collect-only", "--co")
_WORKER_FLAGS = ("-n", "--numprocesses", "--dist", "--maxprocesses")


def usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def requested_workers(env: Mapping[str, str], cores: int) -> int:
    """The worker count: $HACKMATRIX_TEST_WORKERS if set (a positive integer), else the
    usable cores capped at MAX_WORKERS."""
    raw = env.get(ENV_VAR, "").strip()
    if not raw:
        return max(1, min(cores, MAX_WORKERS))
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{ENV_VAR} must be a positive integer (1 runs serially), got {raw!r}")
    return int(raw)


def caller_decides(pytest_args: Sequence[str]) -> bool:
    for i, arg in enumerate(pytest_args):
        if arg in _SERIAL_FLAGS:
            return True
        if any(arg == flag or arg.startswith(flag + "=") for flag in _WORKER_FLAGS):
            return True
        if arg.startswith("-n") and arg[2:].isdigit():  # -n2
            return True
        if arg == "-p" and i + 1 < len(pytest_args) and pytest_args[i + 1] == "no:xdist":
            return True
        if arg == "-pno:xdist":
            return True
        if _short_flags_include_s(arg):
            return True
    return False


# pytest's one-letter options that take a value: in "-rs" or "-kslow" the rest is that value.
_SHORT_WITH_VALUE = set("kmrpcoWn")


def _short_flags_include_s(arg: str) -> bool:
    """True for -s run together with other one-letter flags (-xs, -vsx), which turns
    capturing off; False for "-rs", where `s` is the value of -r."""
    if not arg.startswith("-") or arg.startswith("--"):
        return False
    for letter in arg[1:]:
        if letter == "s":
            return True
        if letter in _SHORT_WITH_VALUE:
            return False
    return False


def xdist_args(
    pytest_args: Sequence[str], env: Mapping[str, str], cores: int, have_xdist: bool
) -> list[str]:
    workers = requested_workers(env, cores)
    if workers < 2 or not have_xdist or caller_decides(pytest_args):
        return []
    return ["-n", str(workers), "--dist", "loadfile", "--no-loadscope-reorder"]


def main(argv: Sequence[str]) -> int:
    have_xdist = importlib.util.find_spec("xdist") is not None
    try:
        args = xdist_args(argv, os.environ, usable_cores(), have_xdist)
    except ValueError as error:
        print(f"[test] {error}", file=sys.stderr)
        return 2
    for arg in args:
        print(arg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
