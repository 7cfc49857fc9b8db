"""Loading a module by its file path, for the tests of the scripts in python/scripts/ and of
another directory's conftest.py.

Scripts are files, not package modules, and several conftest.py files share the module name
"conftest", so both are loaded by path under a name of their own. tests/ is on sys.path
(pytest puts it there when it loads tests/conftest.py), so any test imports this module.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "python" / "scripts"


def load_path(path: Path, module_name: str) -> ModuleType:
    """The module in `path`, executed once more under `module_name`."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_script(name: str) -> ModuleType:
    """python/scripts/<name>.py as a module (its `main` is not run)."""
    return load_path(SCRIPTS / f"{name}.py", f"hackmatrix_script_{name}")
