"""Frees every compiled XLA program at the end of each test file (tests/ and parity/ use it).

Why: on the CPU, XLA loads each kernel of a compiled program as its own small object, three
memory mappings apiece (code, read-only data, data), and keeps them until the program is
freed. One batched game step is about 780 kernels, some 2,300 mappings. jax keeps every
program it compiled for as long as the process lives, so a pytest-xdist worker that runs
dozens of test files gathers mappings file after file: a monitored run of the suite on two
workers peaked at 53,855 in one worker. Linux refuses a process's mappings past
`vm.max_map_count` (65,530 by default); XLA then aborts or crashes mid-compile. That was
the worker crash in CI (specs/architecture.md, "When a test worker crashes"): always late
in the run, in whichever test compiled next, and never when the search tests ran alone.

`jax.clear_caches()` drops jax's references to the programs it compiled, and a garbage
collection frees them with their mappings. Most programs serve one file only; one that a
session fixture or two files share is read back from the persistent compilation cache
test.sh sets up (or compiled again, if it compiled in under a second), so clearing between
files costs little: the suite took the same time with it. jax is cleared only if a test
file already imported it: a Swift-only file stays free of jax.
"""

from __future__ import annotations

import gc
import sys

import pytest


@pytest.fixture(scope="module", autouse=True)
def free_compiled_programs_after_each_file():
    """After the file's own module fixtures are torn down (autouse conftest fixtures are set
    up first, so they end last), clear jax's compiled programs and collect them."""
    yield
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.clear_caches()
        gc.collect()
