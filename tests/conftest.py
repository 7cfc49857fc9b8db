"""Shared fixtures."""

import shutil
from pathlib import Path

import pytest


def _have_swift_toolchain() -> bool:
    return shutil.which("swift") is not None or Path("/opt/swift/usr/bin/swift").exists()


@pytest.fixture(scope="session")
def swift_binary() -> Path:
    """The HackMatrix CLI: $HACKMATRIX_BINARY, else built (incrementally) with ./swift-build.

    Without a Swift toolchain a previously built binary is used; with neither,
    the tests that need it are skipped.
    """
    from hackmatrix.swift_bridge import binary

    if not _have_swift_toolchain():
        try:
            return binary.find_binary()
        except FileNotFoundError as error:
            pytest.skip(f"no Swift toolchain and no built binary: {error}")
    try:
        return binary.find_binary(build=True)
    except (FileNotFoundError, RuntimeError) as error:
        pytest.fail(f"cannot build the Swift CLI: {error}")
