"""Split a CPU host into several XLA devices, and read how much CPU the host took back.

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


def steal_reading() -> tuple[int, int] | None:
    """(steal, total) CPU ticks since boot from /proc/stat; None off Linux."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    # cpu  user nice system idle iowait irq softirq steal [guest guest_nice, counted in user/nice]
    ticks = [int(x) for x in fields[1:9]]
    return (ticks[7] if len(ticks) > 7 else 0), sum(ticks)


def steal_percent(before: tuple[int, int] | None) -> float | None:
    """Percent of CPU time the hypervisor gave to other machines since `before`.

    On a shared virtual machine the same code ran 30-40% slower while its
    neighbours were busy; printing the steal beside a timing says which kind
    of hour it was measured in. None where the reading is unavailable.
    """
    if before is None:
        return None
    now = steal_reading()
    if now is None:
        return None
    total = now[1] - before[1]
    return 100.0 * (now[0] - before[0]) / total if total > 0 else 0.0
