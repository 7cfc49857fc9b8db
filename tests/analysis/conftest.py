"""Fixtures for the analysis tests: the trainer tests' own (tests/purejaxrl/conftest.py).

Some of these tests train a tiny run first (through tests/purejaxrl/test_runs.py's `train`)
or play the stand-in game, so that directory's conftest is loaded by path and its names
are offered here as well: `from conftest import ...` in test_runs.py, imported from a test
here, finds them in this module. Loading it also puts tests/purejaxrl on sys.path, where
test_runs.py and standin_env.py live.
"""

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "purejaxrl" / "conftest.py"
_SPEC = importlib.util.spec_from_file_location("purejaxrl_tests_conftest", _PATH)
_trainer_tests = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_trainer_tests)

REPO = _trainer_tests.REPO
TINY_FLAGS = _trainer_tests.TINY_FLAGS
TINY_BATCH = _trainer_tests.TINY_BATCH
game_module_name = _trainer_tests.game_module_name
game_module = _trainer_tests.game_module  # the session fixture
subprocess_env = _trainer_tests.subprocess_env
