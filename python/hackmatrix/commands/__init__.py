"""The user-facing commands, installed as ``hackmatrix-*`` entry points (pyproject.toml).

Each module has a ``main(argv=None) -> int``; ``python/scripts/<name>.py`` are
thin wrappers over the same functions, so a checkout can run them by path.
"""
