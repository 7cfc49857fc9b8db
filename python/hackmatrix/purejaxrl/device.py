"""Device detection, the persistent compilation cache and multi-host start-up."""

from __future__ import annotations

import os
from pathlib import Path

# Repo-local default cache (training.md §8); the key covers JAX version, shapes
# and device type, so one directory serves every config.
DEFAULT_CACHE_DIR = Path(__file__).resolve().parents[3] / ".jax_cache"


def enable_compilation_cache(cache_dir: str | os.PathLike | None = None) -> str:
    """Turn on JAX's persistent compilation cache and return its directory.

    `$JAX_COMPILATION_CACHE_DIR` wins over the argument, which wins over the
    repo-local default. Safe to call after `import jax`.
    """
    import jax

    directory = os.environ.get("JAX_COMPILATION_CACHE_DIR") or str(cache_dir or DEFAULT_CACHE_DIR)
    os.environ["JAX_COMPILATION_CACHE_DIR"] = directory
    Path(directory).mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", directory)
    # Cache everything that took noticeable time to compile.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return directory


def initialize_multi_host() -> None:
    """Join a multi-host run; the coordinator comes from the TPU/cluster environment."""
    import jax

    jax.distributed.initialize()


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


def to_host(tree):
    """numpy copy of a pytree; replicated arrays spanning other hosts use the local copy."""
    import jax
    import numpy as np

    def one(x):
        if isinstance(x, jax.Array) and not x.is_fully_addressable:
            return np.asarray(x.addressable_data(0))
        return np.asarray(x)

    return jax.tree_util.tree_map(one, tree)
