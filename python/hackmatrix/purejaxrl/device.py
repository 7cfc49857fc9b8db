"""Device detection, the persistent compilation cache and multi-host start-up.

Multi-host (docs/training-guide.md "Multi-host"): every process runs the same
trainer and sees only its own devices. Arrays that span hosts are placed
from host values every process holds alike (each process keeps only its own
devices' slices) and read back with a collective (`to_host`), so every
process must make these calls in the same order.
"""

from __future__ import annotations

import os
from typing import Any

# The one persistent compilation cache of the project (training.md §8), re-exported here.
from hackmatrix.jax_cache import enable_compilation_cache  # noqa: F401

# Read when the matching flag is absent. JAX_COORDINATOR_ADDRESS is also read by
# jax.distributed itself; the two counts are this trainer's (jax has no variables for them).
# On a TPU pod slice, under SLURM or Open MPI, jax fills in whatever is still unset.
ENV_COORDINATOR = "JAX_COORDINATOR_ADDRESS"
ENV_NUM_PROCESSES = "JAX_NUM_PROCESSES"
ENV_PROCESS_ID = "JAX_PROCESS_ID"


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    if value in (None, ""):
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name}={value!r} is not an integer") from None


def initialize_multi_host(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    timeout_s: int = 300,
) -> None:
    """Join a multi-process run (call before any other jax use).

    Missing values come from the environment (see ENV_*), and then from
    jax's cluster detection (TPU pod, SLURM, Open MPI). `timeout_s` bounds
    both the wait for the other processes to join and the heartbeat: a
    process whose peer died exits within about that time instead of hanging.
    On CPU the cross-process collectives use gloo over TCP.
    """
    import jax

    coordinator_address = coordinator_address or os.environ.get(ENV_COORDINATOR) or None
    num_processes = num_processes if num_processes is not None else _env_int(ENV_NUM_PROCESSES)
    process_id = process_id if process_id is not None else _env_int(ENV_PROCESS_ID)
    if num_processes is not None and num_processes < 1:
        raise ValueError(f"--num-processes must be at least 1, got {num_processes}")
    if process_id is not None and num_processes is not None and not 0 <= process_id < num_processes:
        raise ValueError(f"--process-id must be in [0, {num_processes}), got {process_id}")
    if timeout_s < 1:
        raise ValueError(f"--distributed-timeout must be at least 1 second, got {timeout_s}")
    # CPU devices of different processes talk through gloo (jax's default today; stated
    # here so a changed default cannot silently leave CPU runs without collectives).
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        coordinator_address=coordinator_address,
        num_processes=num_processes,
        process_id=process_id,
        initialization_timeout=timeout_s,
        heartbeat_timeout_seconds=timeout_s,
    )


def describe_devices() -> dict:
    """`device_type` (TPU/GPU/CPU), local and global `device_count`, `backend`."""
    import jax

    backend = jax.default_backend()
    device_type = {"tpu": "TPU", "gpu": "GPU", "cuda": "GPU", "rocm": "GPU"}.get(backend, "CPU")
    return {
        "device_type": device_type,
        "device_count": jax.device_count(),
        "local_device_count": jax.local_device_count(),
        "process_count": jax.process_count(),
        "process_index": jax.process_index(),
        "backend": backend,
        "device_kind": jax.devices()[0].device_kind,
    }


def cpu_model() -> str:
    """The host CPU's model name (Linux's /proc/cpuinfo), else what `platform` knows."""
    import platform

    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


# Where a run's floating point comes from: the same command on another CPU or another
# JAX release trains a different network (specs/experiments/24-program-choice-entropy.md
# §24.1).
PROVENANCE_PACKAGES = ("jax", "jaxlib", "flax", "optax", "numpy")


def describe_software() -> dict:
    """The versions and host a run trains with: Python, the numeric packages, the CPU,
    and the accelerator kind. Stored in the checkpoint's config as `provenance`."""
    import platform
    from importlib import metadata

    versions = {}
    for name in PROVENANCE_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    import jax

    return {
        "python": platform.python_version(),
        **versions,
        "cpu": cpu_model(),
        "device_kind": jax.devices()[0].device_kind,
    }


def provenance_changes(stored: dict | None, current: dict) -> list[str]:
    """`name: was -> now` for every provenance entry a resume changes; [] when the
    checkpoint has none (it predates the record) or nothing changed."""
    if not stored:
        return []
    return [
        f"{name}: {stored.get(name, 'unrecorded')} -> {value}"
        for name, value in current.items()
        if stored.get(name, "unrecorded") != value
    ]


def to_host(tree: Any) -> Any:
    """numpy copy of a pytree of global values.

    Replicated arrays use the local copy. Arrays sharded over other hosts
    are gathered with a collective, so with several processes every process
    must call this with arrays of the same shardings.
    """
    import jax
    import numpy as np

    def one(x):
        if not isinstance(x, jax.Array) or x.is_fully_addressable:
            return np.asarray(x)
        if x.sharding.is_fully_replicated:
            return np.asarray(x.addressable_data(0))
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(x, tiled=True))

    return jax.tree_util.tree_map(one, tree)


def sync_processes(name: str) -> None:
    """Wait until every process reaches this point (no-op with one process)."""
    import jax

    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(name)


def agree_across_processes(stop: bool, save_due: bool) -> tuple[bool, bool]:
    """Decisions every process must take together, or the collectives would deadlock.

    A stop asked on any process (a signal reaches one host) stops them all;
    a timed save follows process 0's clock. With one process both pass through.
    """
    import jax

    if jax.process_count() == 1:
        return stop, save_due
    import numpy as np
    from jax.experimental import multihost_utils

    flags = np.asarray(multihost_utils.process_allgather(np.array([stop, save_due], np.int32)))
    return bool(flags[:, 0].any()), bool(flags[0, 1])


def peer_failure_message(error: BaseException) -> str | None:
    """A clear message when `error` is a failed cross-process collective, else None.

    When one process dies, the others' next collective fails (gloo: connection
    reset) or, failing that, the coordination service notices the missing
    heartbeat within --distributed-timeout seconds and ends them.
    """
    import sys

    jax = sys.modules.get("jax")
    if jax is None or not isinstance(error, jax.errors.JaxRuntimeError) or jax.process_count() == 1:
        return None
    first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return (
        f"process {jax.process_index()}: a collective with the other {jax.process_count() - 1} "
        f"process(es) failed, most likely because one of them died (see its log): {first_line}"
    )
