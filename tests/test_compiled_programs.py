"""tests/compiled_programs.py frees each test file's compiled programs before the next file.

A small suite of two files shares one jitted function: the first file compiles it, the
second checks that jax no longer holds the program. It runs in a subprocess twice, with the
fixture as its conftest.py and without: only the fixture frees the program, so the check
also shows it would catch the fixture doing nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent / "compiled_programs.py"

SHARED = """\
import jax

add_one = jax.jit(lambda x: x + 1)
"""

COMPILES = """\
from shared import add_one


def test_compiles_a_program():
    assert int(add_one(1)) == 2
    assert add_one._cache_size() == 1
"""

FINDS_IT_FREED = """\
from shared import add_one


def test_the_previous_file_program_is_freed():
    assert add_one._cache_size() == 0
"""


def _run(tmp_path: Path, conftest: str) -> subprocess.CompletedProcess:
    (tmp_path / "conftest.py").write_text(conftest)
    (tmp_path / "shared.py").write_text(SHARED)
    (tmp_path / "test_a_compiles.py").write_text(COMPILES)
    (tmp_path / "test_b_finds_it_freed.py").write_text(FINDS_IT_FREED)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    return subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_fixture_frees_a_file_programs_before_the_next_file(tmp_path):
    done = _run(tmp_path, FIXTURE.read_text())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_without_the_fixture_the_program_stays(tmp_path):
    done = _run(tmp_path, "")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout
