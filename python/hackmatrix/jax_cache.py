"""One persistent JAX compilation cache for every entry point.

Compiling the game's step takes tens of seconds on a small CPU and about a
second to load from disk, so the trainer, the parity harness, the viewer and
the benchmarks all keep compiled code in the same folder:
``$JAX_COMPILATION_CACHE_DIR`` when set, else the repo-local ``.jax_cache``
(training.md §8), else ``~/.cache/hackmatrix/jax`` for an installed package.
JAX's cache key covers the JAX version, the shapes and the device type, so one
folder serves every configuration.
"""

from __future__ import annotations

import os
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[2]


def default_cache_dir() -> Path:
    if (_REPO_ROOT / "pyproject.toml").is_file():
        return _REPO_ROOT / ".jax_cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hackmatrix" / "jax"


def enable_compilation_cache(cache_dir: str | os.PathLike | None = None) -> str:
    """Turn the persistent cache on and return its folder.

    ``$JAX_COMPILATION_CACHE_DIR`` wins over ``cache_dir``, which wins over the
    default. Safe to call after ``import jax`` and more than once.
    """
    import jax

    directory = os.environ.get("JAX_COMPILATION_CACHE_DIR") or str(cache_dir or default_cache_dir())
    os.environ["JAX_COMPILATION_CACHE_DIR"] = directory  # child processes share it
    Path(directory).mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", directory)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return directory
