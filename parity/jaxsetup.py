"""JAX settings for the harness: CPU, and a persistent compilation cache.

Compiling the engine's step takes tens of seconds on a small CPU; the cache
makes every run after the first start in about a second. The folder is
``$HACKMATRIX_JAX_CACHE`` or ``~/.cache/hackmatrix/jax``.
"""

from __future__ import annotations

import os
from pathlib import Path

_done = False


def configure_jax() -> None:
    global _done
    if _done:
        return
    import jax

    folder = os.environ.get("HACKMATRIX_JAX_CACHE") or str(Path.home() / ".cache" / "hackmatrix" / "jax")
    Path(folder).mkdir(parents=True, exist_ok=True)
    # Parity is judged on CPU, where float32 division is exact (observation.md §10).
    jax.config.update("jax_platforms", os.environ.get("HACKMATRIX_PARITY_PLATFORM", "cpu"))
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    _done = True
