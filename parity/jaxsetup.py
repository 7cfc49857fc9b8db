"""JAX settings for the harness: CPU, and the project's persistent compilation cache.

Compiling the engine's step takes tens of seconds on a small CPU; the cache
(``hackmatrix.jax_cache``: ``$JAX_COMPILATION_CACHE_DIR``, else the repo's
``.jax_cache``) makes every run after the first start in about a second.
"""

from __future__ import annotations

import os

_done = False


def configure_jax() -> None:
    global _done
    if _done:
        return
    import jax

    from hackmatrix.jax_cache import enable_compilation_cache

    # Parity is judged on CPU, where float32 division is exact (observation.md §10).
    jax.config.update("jax_platforms", os.environ.get("HACKMATRIX_PARITY_PLATFORM", "cpu"))
    enable_compilation_cache()
    _done = True
