"""tests/xdist_crash_tolerance.py keeps a `--dist loadfile` run going after a worker dies.

Each case writes a small suite with tests that kill their own worker (SIGSEGV, as a
crashing extension would), puts the scheduler in its conftest.py and runs it
on xdist workers in a subprocess with a time limit: xdist 3.8 alone hangs on some of
these. The run must end, report each crashed test failed once, and run every other test.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("xdist")

SCHEDULER = Path(__file__).resolve().parent / "xdist_crash_tolerance.py"

PASSING = "def test_{name}():\n    pass\n"
CRASHING = "def test_{name}():\n    import os, signal\n    os.kill(os.getpid(), signal.SIGSEGV)\n"


def _file(*tests: tuple[str, bool]) -> str:
    lines = [(CRASHING if crashes else PASSING).format(name=name) for name, crashes in tests]
    return "\n".join(lines)


def _run(tmp_path: Path, files: dict[str, str], workers: int) -> tuple[str, int, int]:
    (tmp_path / "conftest.py").write_text(SCHEDULER.read_text())
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-n", str(workers), "--dist", "loadfile", "--no-loadscope-reorder"]
    try:
        done = subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
        )
    except subprocess.TimeoutExpired as hung:
        raise AssertionError(f"the run hung after a worker crash:\n{hung.stdout}") from None
    summary = done.stdout.strip().splitlines()[-1]
    failed = re.search(r"(\d+) failed", summary)
    passed = re.search(r"(\d+) passed", summary)
    return (
        done.stdout,
        int(failed.group(1)) if failed else 0,
        int(passed.group(1)) if passed else 0,
    )


OTHER_FILES = {
    f"test_other_{i}.py": _file((f"first_{i}", False), (f"second_{i}", False)) for i in range(4)
}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_crash_mid_file_runs_the_rest_of_that_file_and_the_others(tmp_path, workers):
    files = {"test_a_crash.py": _file(("before", False), ("crash", True), ("after", False))}
    out, failed, passed = _run(tmp_path, {**files, **OTHER_FILES}, workers)
    assert (failed, passed) == (1, 2 + 2 * len(OTHER_FILES)), out
    assert "crashed while running 'test_a_crash.py::test_crash'" in out


def test_a_one_test_file_crashing_and_the_last_test_of_the_last_file(tmp_path):
    files = {
        **OTHER_FILES,
        "test_x_alone.py": _file(("alone", True)),
        "test_z_last.py": _file(("ok", False), ("last", True)),
    }
    out, failed, passed = _run(tmp_path, files, 2)
    assert (failed, passed) == (2, 1 + 2 * len(OTHER_FILES)), out
