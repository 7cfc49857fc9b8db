"""Shared fixtures."""

import shutil
from pathlib import Path

import pytest

from tests.compiled_programs import free_compiled_programs_after_each_file  # noqa: F401 (autouse)
from tests.xdist_crash_tolerance import pytest_xdist_make_scheduler  # noqa: F401 (a hook)


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


# The test files that take longest (seconds of all their tests, two workers, empty
# compilation cache; specs/performance.md, "The test suite's time"), heaviest first. Under
# pytest-xdist each file runs whole on one worker, handed out in collection order as
# workers free up; starting with the long files lets the short ones fill in at the end,
# so the workers finish together instead of one running a long file alone (xdist's own
# order, by the number of tests in a file, put the one-test learning slice last).
# Only the order depends on this list: a file missing from it still runs, after these.
HEAVY_FILES_FIRST = (
    "tests/purejaxrl/test_bit_identical.py",  # ~220: five recipes, five compiles
    "tests/purejaxrl/test_runs.py",  # 288
    "tests/purejaxrl/test_learning.py",  # 182
    "tests/analysis/test_behaviour.py",  # 177
    "tests/purejaxrl/test_expert_iteration.py",  # 144 (one worker, load 3): the search's chunk
    "tests/jax_env/test_properties.py",  # 138
    "parity/tests/test_parity_engines.py",  # 131
    "tests/purejaxrl/test_networks.py",  # 120
    "tests/jax_env/test_bench_rollout.py",  # 112
    "tests/purejaxrl/test_multihost.py",  # 106
    "parity/tests/test_curriculum_starts.py",  # 98
    "tests/purejaxrl/test_ppo.py",  # 83
    "tests/purejaxrl/test_program_levers_delay.py",  # 80
    "tests/test_viewer.py",  # 72
    "tests/purejaxrl/test_reward_weights.py",  # 66
    "tests/purejaxrl/test_ent_coef_programs.py",  # 63
    "tests/test_gym_engine_crash.py",  # 52
    "tests/purejaxrl/test_value_target.py",  # 38
    "tests/purejaxrl/test_reward_anneal.py",  # 36
    "tests/purejaxrl/test_ent_coef_schedule.py",  # 33
    "tests/purejaxrl/test_program_bonus.py",  # 29
    "tests/jax_env/test_building_blocks.py",  # 29
)


def pytest_collection_modifyitems(config, items):
    """Heavy files first (HEAVY_FILES_FIRST), the rest after in collection order; the tests
    inside a file keep their order."""
    rank = {name: i for i, name in enumerate(HEAVY_FILES_FIRST)}
    root = Path(config.rootpath)

    def file_rank(item):
        try:
            name = item.path.relative_to(root).as_posix()
        except ValueError:
            return len(rank)
        return rank.get(name, len(rank))

    items.sort(key=file_rank)  # stable: order within a file and among the rest is kept
