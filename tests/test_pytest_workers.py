"""test.sh's choice of pytest-xdist workers (python/scripts/pytest_workers.py)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from script_loading import load_path, load_script

workers = load_script("pytest_workers")
SCRIPT = Path(workers.__file__)

PARALLEL_2 = ["-n", "2", "--dist", "loadfile", "--no-loadscope-reorder"]


def test_one_worker_per_core_capped():
    assert workers.xdist_args([], {}, cores=2, have_xdist=True) == PARALLEL_2
    assert workers.xdist_args([], {}, cores=64, have_xdist=True)[1] == str(workers.MAX_WORKERS)
    assert workers.xdist_args([], {}, cores=1, have_xdist=True) == []


def test_the_environment_sets_the_count_and_1_runs_serially():
    env = {workers.ENV_VAR: "3"}
    assert workers.xdist_args([], env, cores=2, have_xdist=True)[:2] == ["-n", "3"]
    assert workers.xdist_args([], {workers.ENV_VAR: "1"}, cores=8, have_xdist=True) == []
    assert workers.xdist_args([], {workers.ENV_VAR: " "}, cores=2, have_xdist=True) == PARALLEL_2


@pytest.mark.parametrize("bad", ["0", "-2", "two", "1.5"])
def test_a_bad_count_is_refused_clearly(bad):
    with pytest.raises(ValueError, match=workers.ENV_VAR):
        workers.xdist_args([], {workers.ENV_VAR: bad}, cores=2, have_xdist=True)


def test_without_xdist_the_run_is_serial():
    assert workers.xdist_args([], {}, cores=8, have_xdist=False) == []


@pytest.mark.parametrize(
    "args",
    [
        ["-n", "4"],
        ["-n4"],
        ["--numprocesses=auto"],
        ["--dist", "load"],
        ["-p", "no:xdist"],
        ["--pdb"],
        ["-s"],
        ["-xs"],
        ["-vsx"],
        ["--capture=no"],
        ["--collect-only"],
    ],
)
def test_the_callers_own_choice_or_a_one_process_flag_wins(args):
    assert workers.xdist_args(["tests/test_names.py", *args], {}, 2, True) == []


@pytest.mark.parametrize("args", [["-k", "slow"], ["-kslow"], ["-rs"], ["-x", "-q"], ["-m", "s"]])
def test_other_flags_keep_the_workers(args):
    assert workers.xdist_args(args, {}, 2, True) == PARALLEL_2


def test_the_script_prints_one_argument_a_line_and_refuses_a_bad_count():
    env = {"PATH": "/usr/bin:/bin", workers.ENV_VAR: "2"}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "-q"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0
    expected = PARALLEL_2 if importlib.util.find_spec("xdist") else []
    assert done.stdout.split() == expected
    env[workers.ENV_VAR] = "lots"
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env)
    assert done.returncode == 2 and workers.ENV_VAR in done.stderr and done.stdout == ""


def test_the_heavy_files_run_first_and_all_exist(request):
    """tests/conftest.py's HEAVY_FILES_FIRST: a renamed or deleted file must leave the list
    (it would silently stop being scheduled early), and this session's collection puts the
    listed files it holds first, in the list's order."""
    root = Path(request.config.rootpath)
    # By path: several conftest.py files share the module name "conftest".
    conftest = load_path(root / "tests/conftest.py", "tests_conftest")
    heavy = conftest.HEAVY_FILES_FIRST
    assert [name for name in heavy if not (root / name).is_file()] == []
    assert len(set(heavy)) == len(heavy)
    files = [item.path.relative_to(root).as_posix() for item in request.session.items]
    order = list(dict.fromkeys(files))
    collected_heavy = [name for name in heavy if name in order]
    assert order[: len(collected_heavy)] == collected_heavy
