"""Locating (and optionally building) the Swift CLI binary.

Order (``specs/architecture.md``, "Finding the Swift binary"):

1. ``$HACKMATRIX_BINARY`` if set (it must then point at an executable file;
   a wrong value is an error, never silently skipped);
2. the release binary that ``./swift-build`` puts under
   ``swift/.build/<os>-<arch>/``.
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

ENV_VAR = "HACKMATRIX_BINARY"
BUILD_COMMAND = "./swift-build"

REPO_ROOT = Path(__file__).resolve().parents[3]


def platform_build_dir(repo_root: Path = REPO_ROOT) -> Path:
    """The scratch folder ``./swift-build`` uses: ``swift/.build/<os>-<arch>``."""
    name = f"{platform.system().lower()}-{platform.machine()}"
    return repo_root / "swift" / ".build" / name


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _built_binary(repo_root: Path) -> Path | None:
    build_dir = platform_build_dir(repo_root)
    # SwiftPM writes <scratch>/<triple>/release/ and links <scratch>/release to it.
    candidates = [build_dir / "release" / "hackmatrix"]
    candidates += sorted(build_dir.glob("*/release/hackmatrix"))
    for candidate in candidates:
        if _is_executable(candidate):
            return candidate.resolve()
    return None


def build_binary(repo_root: Path = REPO_ROOT) -> Path:
    """Run ``./swift-build`` and return the binary path it prints last."""
    script = repo_root / "swift-build"
    if not script.is_file():
        raise FileNotFoundError(f"cannot build the Swift CLI: {script} does not exist")
    done = subprocess.run([str(script)], cwd=repo_root, capture_output=True, text=True)
    if done.returncode != 0:
        tail = done.stderr[-4000:]
        raise RuntimeError(f"{BUILD_COMMAND} failed with status {done.returncode}:\n{tail}")
    lines = done.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(f"{BUILD_COMMAND} printed no binary path")
    path = Path(lines[-1])
    if not _is_executable(path):
        raise RuntimeError(f"{BUILD_COMMAND} reported {path}, which is not an executable file")
    return path


def find_binary(build: bool = False, repo_root: Path = REPO_ROOT) -> Path:
    """Path of the HackMatrix CLI.

    With ``build=True`` the package is (re)built with ``./swift-build`` first
    (incremental, so cheap when nothing changed), unless ``$HACKMATRIX_BINARY``
    names the binary to use.
    """
    override = os.environ.get(ENV_VAR)
    if override:
        path = Path(override).expanduser()
        if not _is_executable(path):
            raise FileNotFoundError(
                f"${ENV_VAR} is set to {override!r}, which is not an executable file"
            )
        return path.resolve()
    if build:
        return build_binary(repo_root)
    found = _built_binary(repo_root)
    if found is not None:
        return found
    raise FileNotFoundError(
        "HackMatrix CLI binary not found. Set $"
        + ENV_VAR
        + " to its path, or build it into "
        + str(platform_build_dir(repo_root))
        + f" by running `{BUILD_COMMAND}` in {repo_root}."
    )
