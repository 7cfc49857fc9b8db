"""Device detection, the persistent compilation cache and multi-host start-up."""

from __future__ import annotations

# The one persistent compilation cache of the project (training.md §8), re-exported here.
from hackmatrix.jax_cache import enable_compilation_cache  # noqa: F401


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
