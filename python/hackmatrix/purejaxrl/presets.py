"""Preset files: named, versioned sets of option values a run starts from (training.md §1.8).

A preset is a TOML file: `version = 1`, an optional `description` and `extends` (a preset
it builds on), and one table per section of `options.SECTIONS` holding option names and
values, e.g. `[ppo] ent_coef = 0.05`. The shipped ones live in `presets/` beside this
module (`default`: the recommended recipe, the one a run uses unless `--preset` names
another; `canonical`: the bare option defaults; `gpu`: the default at 2,048 envs);
`--preset PATH` reads any file of the same form. Every key is checked against the option
declarations: an unknown key, a key in the wrong table, a value of the wrong type, a
command-line-only option or another version is an error that names the file, before
anything is built.
"""

from __future__ import annotations

import dataclasses
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from .config import OPTION_BY_NAME, OPTIONS
from .options import SECTION_BY_NAME, SECTIONS, check_value

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, before it joined the standard library
    import tomli as tomllib

PRESET_VERSION = 1
TOP_LEVEL_KEYS = ("version", "description", "extends")
MAX_EXTENDS = 8


class PresetError(ValueError):
    """A preset that cannot be used; the message names the file."""


@dataclasses.dataclass(frozen=True)
class Preset:
    """A loaded preset: its values by option name, with what it extends applied under them."""

    name: str  # as given to --preset: a shipped name or a path
    path: str  # the file read
    description: str
    values: dict[str, Any]

    @property
    def label(self) -> str:
        """How a value's source names this preset ("preset default")."""
        return f"preset {self.name}"


def shipped_dir() -> Path:
    return Path(str(resources.files(__package__) / "presets"))


def shipped_names() -> list[str]:
    return sorted(path.stem for path in shipped_dir().glob("*.toml"))


def load_preset(name_or_path: str, *, _seen: tuple[Path, ...] = ()) -> Preset:
    """The preset `name_or_path` names: a shipped preset's name, or a TOML file's path."""
    path = _locate(name_or_path, _seen[-1].parent if _seen else None)
    if path in _seen:
        chain = " -> ".join(str(p) for p in (*_seen, path))
        raise PresetError(f"preset {path}: extends itself ({chain})")
    if len(_seen) >= MAX_EXTENDS:
        raise PresetError(f"preset {path}: more than {MAX_EXTENDS} levels of extends")
    where = f"preset {path}"
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        raise PresetError(f"{where}: not valid TOML ({error})") from None
    _check_top_level(data, where)
    values: dict[str, Any] = {}
    if "extends" in data:
        try:
            values.update(load_preset(data["extends"], _seen=(*_seen, path)).values)
        except PresetError as error:
            raise PresetError(f"{where}: extends {data['extends']}: {error}") from None
    values.update(_section_values(data, where))
    return Preset(
        name=name_or_path,
        path=str(path),
        description=str(data.get("description", "")),
        values=values,
    )


def _locate(name_or_path: str, relative_to: Path | None) -> Path:
    """A shipped preset by name, else a file (relative to the preset that extends it)."""
    if not isinstance(name_or_path, str) or not name_or_path:
        raise PresetError(f"--preset: expected a preset name or a file, got {name_or_path!r}")
    shipped = shipped_dir() / f"{name_or_path}.toml"
    if "/" not in name_or_path and not name_or_path.endswith(".toml"):
        if shipped.is_file():
            return shipped.resolve()
        raise PresetError(
            f"--preset {name_or_path}: no such preset; shipped presets: "
            f"{', '.join(shipped_names())} (or give the path of a .toml file)"
        )
    path = Path(name_or_path).expanduser()
    if relative_to is not None and not path.is_absolute():
        path = relative_to / path
    if not path.is_file():
        raise PresetError(f"--preset {name_or_path}: no such file")
    return path.resolve()


def _check_top_level(data: dict[str, Any], where: str) -> None:
    version = data.get("version")
    if version is None:
        raise PresetError(f"{where}: no version; a preset starts with version = {PRESET_VERSION}")
    if isinstance(version, bool) or version != PRESET_VERSION:
        raise PresetError(
            f"{where}: version {version!r} is not one this trainer reads "
            f"(it reads version {PRESET_VERSION})"
        )
    for key, value in data.items():
        if key in SECTION_BY_NAME:
            if not isinstance(value, dict):
                raise PresetError(f"{where}: {key} must be a table ([{key}]), got {value!r}")
        elif key not in TOP_LEVEL_KEYS:
            raise PresetError(
                f"{where}: unknown key {key!r}; a preset holds {', '.join(TOP_LEVEL_KEYS)} "
                f"and the tables {', '.join(f'[{s.name}]' for s in SECTIONS if s.in_presets)}"
            )
    for key in ("description", "extends"):
        if key in data and not isinstance(data[key], str):
            raise PresetError(f"{where}: {key} must be a string, got {data[key]!r}")


def _section_values(data: dict[str, Any], where: str) -> dict[str, Any]:
    """{option name: checked value} of the preset's tables."""
    values: dict[str, Any] = {}
    for section in SECTIONS:
        table = data.get(section.name)
        if table is None:
            continue
        if not section.in_presets:
            raise PresetError(
                f"{where}: [{section.name}] holds command-line-only options; a preset "
                "cannot set them"
            )
        for key, raw in table.items():
            item = OPTION_BY_NAME.get(key)
            if item is None or item.spec.section != section.name:
                raise PresetError(_misplaced(key, section.name, where))
            if not item.in_presets:
                raise PresetError(f"{where}: {key} ({item.flag}) is set on the command line only")
            try:
                values[key] = check_value(item, raw, f"{where} [{section.name}]")
            except ValueError as error:
                raise PresetError(str(error)) from None
    return values


def _misplaced(key: str, section: str, where: str) -> str:
    item = OPTION_BY_NAME.get(key)
    if item is not None:
        return f"{where}: {key} belongs in [{item.spec.section}], not [{section}]"
    valid = [o.name for o in OPTIONS if o.spec.section == section and o.in_presets]
    return f"{where}: [{section}] has no option {key!r}; its options: {', '.join(valid)}"
