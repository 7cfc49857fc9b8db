"""Fixtures for the analysis tests: the trainer tests' own (tests/purejaxrl/conftest.py).

Some of these tests train a tiny run first (through tests/purejaxrl/test_runs.py's `train`)
or play the stand-in game, so that directory's conftest is loaded by path and its names
are offered here as well: `from conftest import ...` in test_runs.py, imported from a test
here, finds them in this module. Loading it also puts tests/purejaxrl on sys.path, where
test_runs.py and standin_env.py live.
"""

from pathlib import Path

from script_loading import load_path

_trainer_tests = load_path(
    Path(__file__).resolve().parents[1] / "purejaxrl" / "conftest.py", "purejaxrl_tests_conftest"
)

REPO = _trainer_tests.REPO
TINY_FLAGS = _trainer_tests.TINY_FLAGS
TINY_BATCH = _trainer_tests.TINY_BATCH
game_module_name = _trainer_tests.game_module_name
game_module = _trainer_tests.game_module  # the session fixture
subprocess_env = _trainer_tests.subprocess_env
standin_run = _trainer_tests.standin_run
