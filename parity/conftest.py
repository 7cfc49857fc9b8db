"""Fixtures for the parity suite (tests/conftest.py does not reach this folder)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("WANDB_MODE", "offline")


def _have_swift_toolchain() -> bool:
    return shutil.which("swift") is not None or Path("/opt/swift/usr/bin/swift").exists()


@pytest.fixture(scope="session")
def swift_binary() -> Path:
    """The CLI: $HACKMATRIX_BINARY, else built with ./swift-build (skipped with no toolchain and no binary)."""
    from hackmatrix import binary

    if not _have_swift_toolchain():
        try:
            return binary.find_binary()
        except FileNotFoundError as error:
            pytest.skip(f"no Swift toolchain and no built binary: {error}")
    try:
        return binary.find_binary(build=True)
    except (FileNotFoundError, RuntimeError) as error:
        pytest.fail(f"cannot build the Swift CLI: {error}")


@pytest.fixture(scope="session")
def engines(swift_binary):
    """One Swift CLI process and one jitted JAX engine, shared by the whole session."""
    pytest.importorskip("jax")
    from parity.engines import JaxAdapter, SwiftAdapter

    swift, jax_engine = SwiftAdapter(str(swift_binary)), JaxAdapter()
    yield swift, jax_engine
    swift.close()
    jax_engine.close()
