"""Split a CPU host into several XLA devices (the benchmarks and the profiler use it).

One XLA CPU device runs a batch of games on roughly 1.6 of this machine's 2
cores; two devices, each stepping half of the batch, use both
(specs/performance.md). XLA reads `XLA_FLAGS` once, when
jax starts, so `request_cpu_devices` must run before anything imports jax.
This module imports nothing but the standard library.
"""

from __future__ import annotations

import os
import sys

_DEVICE_COUNT_FLAG = "--xla_force_host_platform_device_count"


def request_cpu_devices(count: int) -> bool:
    """Ask XLA for `count` CPU devices; returns False when the request cannot take effect.

    A count already in `XLA_FLAGS` is the user's and is kept. After jax has
    been imported the flag is too late, so nothing is changed then either.
    """
    if count < 1:
        raise ValueError(f"need at least one CPU device, got {count}")
    flags = os.environ.get("XLA_FLAGS", "")
    if _DEVICE_COUNT_FLAG in flags or "jax" in sys.modules:
        return False
    os.environ["XLA_FLAGS"] = f"{flags} {_DEVICE_COUNT_FLAG}={count}".strip()
    return True
