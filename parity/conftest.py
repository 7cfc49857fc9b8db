"""Fixtures for the parity suite. tests/conftest.py does not reach this folder, so its
`swift_binary` fixture is imported from there (the repo root is on pytest's path)."""

from __future__ import annotations

import os

import pytest

from tests import conftest as tests_conftest
from tests.compiled_programs import free_compiled_programs_after_each_file  # noqa: F401 (autouse)
from tests.xdist_crash_tolerance import pytest_xdist_make_scheduler  # noqa: F401 (a hook)

swift_binary = tests_conftest.swift_binary  # the fixture, shared with tests/

os.environ.setdefault("WANDB_MODE", "offline")


@pytest.fixture(scope="session")
def engines(swift_binary):
    """One Swift CLI process and one jitted JAX engine, shared by the whole session."""
    pytest.importorskip("jax")
    from parity.engines import JaxAdapter, SwiftAdapter

    swift, jax_engine = SwiftAdapter(str(swift_binary)), JaxAdapter()
    yield swift, jax_engine
    swift.close()
    jax_engine.close()
