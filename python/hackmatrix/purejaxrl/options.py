"""How a trainer option is declared, and what is generated from the declarations.

Every option of the trainer is one dataclass field (`config.TrainConfig` for the training
recipe, stored in checkpoints; `config.RunOptions` for how and where this process runs)
whose metadata is an `Option`: its section, help text, flag names, value parser and
choices, and how it behaves on a resume. The argparse command line and its `--help`, the
checks of a preset file, the start-up configuration table, the notes a resume prints and
the flag reference (`docs/reference/trainer-flags.md`) are all made from these
declarations, so an option is written down once (specs/decisions.md T-16).

Plain Python (no JAX): the command line is parsed and checked before anything compiles.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

# Layers a value can come from, lowest first (training.md §1.8); `Resolved.sources` holds
# one of these per option, a preset layer as "preset NAME".
DEFAULT = "default"
CHECKPOINT = "checkpoint"
COMMAND_LINE = "command line"


@dataclasses.dataclass(frozen=True)
class Section:
    """A group of options: one `--help` group and one table of a preset file.

    `replaced_whole_by_flags` names the layers ("preset", "checkpoint") whose values for
    this section are dropped as a whole as soon as any option of the section is given on
    the command line, instead of being overridden one option at a time.
    """

    name: str  # the preset's table, e.g. [reward]
    title: str  # the --help group and the configuration table's heading
    label: str  # how start-up lines name it ("Reward: continuing the checkpoint's ...")
    in_presets: bool = True  # may a preset set its options
    replaced_whole_by_flags: tuple[str, ...] = ()


SECTIONS: tuple[Section, ...] = (
    Section("rollout", "rollout, budget and seed", "Rollout"),
    Section("algorithm", "algorithm: PPO or expert iteration (training.md §2.10)", "Algorithm"),
    Section("ppo", "PPO", "PPO"),
    Section("network", "network and value head (training.md §2.3, §2.6)", "Network"),
    Section(
        "reward",
        "reward shaping (training.md §1.1, §2.9)",
        "Reward",
        replaced_whole_by_flags=("preset",),
    ),
    Section(
        "curriculum",
        "curriculum starts (training.md §1.7)",
        "Curriculum",
        replaced_whole_by_flags=("preset", "checkpoint"),
    ),
    Section("restarts", "restarts from the agent's own late states (training.md §1.7)", "Restarts"),
    Section("logging", "logging", "Logging"),
    Section("checkpoints", "checkpoints and their evaluation", "Checkpoints"),
    Section("resume", "resume (training.md §4.4)", "Resume", in_presets=False),
    Section("run", "presets, devices and other", "Run", in_presets=False),
)
SECTION_BY_NAME = {section.name: section for section in SECTIONS}


@dataclasses.dataclass(frozen=True)
class Option:
    """The declaration of one option, kept in its dataclass field's metadata.

    `action`: "value" (takes a value, parsed by `parse`), "switch" (a boolean with a
    `--no-` form), "store_true" (a boolean flag only), "optional" (a value that may be left
    out, then `const`).
    """

    section: str
    help: str
    flags: tuple[str, ...] = ()  # default: the field name with dashes
    parse: Callable[[str], Any] | None = None  # argparse's `type`; default: the field's type
    choices: tuple[Any, ...] | None = None
    parser_checks_choices: bool = True  # False: validate() refuses other values instead
    metavar: str | None = None
    action: str = "value"
    const: Any = None
    in_presets: bool = True  # False: command line only, whatever its section says
    # Stored options only (TrainConfig): taken from the checkpoint on a resume unless given
    # on the command line; False for settings the checkpoint stores resolved (re-derived).
    from_checkpoint: bool = True
    label: str | None = None  # how a resume's "Note: ... changes from" names it
    plural: bool = False  # "... change from" rather than "... changes from"
    show: Callable[[Any], str] | None = None  # how the value is printed; default `display`


def option(default: Any, **declaration: Any) -> Any:
    """A dataclass field with `default` that declares a trainer option (see `Option`)."""
    return dataclasses.field(default=default, metadata={"option": Option(**declaration)})


@dataclasses.dataclass(frozen=True)
class Declared:
    """One option as its dataclass declares it: name, default, type and `Option`."""

    name: str
    default: Any
    type: Any  # the resolved annotation, e.g. `int | None`
    spec: Option
    stored: bool  # part of the training config a checkpoint stores (TrainConfig)

    @property
    def flags(self) -> tuple[str, ...]:
        return self.spec.flags or ("--" + self.name.replace("_", "-"),)

    @property
    def flag(self) -> str:
        return self.flags[0]

    @property
    def section(self) -> Section:
        return SECTION_BY_NAME[self.spec.section]

    @property
    def in_presets(self) -> bool:
        return self.spec.in_presets and self.section.in_presets

    @property
    def label(self) -> str:
        return self.spec.label or self.name

    def show(self, value: Any) -> str:
        return self.spec.show(value) if self.spec.show is not None else display(value)


def display(value: Any) -> str:
    """A value as the start-up table and the flag reference print it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return ",".join(f"{k}={v:g}" for k, v in value.items()) or "none"
    return str(value)


def declared(*classes: type) -> tuple[Declared, ...]:
    """The options declared by `classes` (in `SECTIONS` order, then declaration order).

    The first class holds the stored options (the training config)."""
    found = []
    for index, cls in enumerate(classes):
        hints = typing.get_type_hints(cls)
        for field in dataclasses.fields(cls):
            spec = field.metadata.get("option")
            if spec is None:
                raise TypeError(f"{cls.__name__}.{field.name} is not declared with option()")
            if spec.section not in SECTION_BY_NAME:
                raise TypeError(f"{cls.__name__}.{field.name}: unknown section {spec.section!r}")
            found.append(Declared(field.name, field.default, hints[field.name], spec, index == 0))
    order = {section.name: i for i, section in enumerate(SECTIONS)}
    return tuple(sorted(found, key=lambda d: order[d.spec.section]))  # stable within one


# ------------------------------------------------------------------------ types


def base_type(annotation: Any) -> tuple[Any, bool]:
    """`int | None` -> (int, True); `dict[str, float]` -> (dict, False)."""
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1:
            raise TypeError(f"unsupported option type {annotation!r}")
        return base_type(rest[0])[0], True
    if origin is dict:
        return dict, False
    return annotation, False


TYPE_NAMES = {int: "a whole number", float: "a number", str: "a string", bool: "true or false"}


def check_value(item: Declared, value: Any, where: str) -> Any:
    """A value read from a file (a preset), checked against the option's type and choices
    and converted as the command line would (an integer where a float is expected)."""
    kind, _ = base_type(item.type)
    if kind is dict:
        return _check_weights(item, value, where)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise ValueError(
            f"{where}: {item.name} must be {TYPE_NAMES.get(kind, kind.__name__)} "
            f"(as {item.flag} takes), got {value!r}"
        )
    if item.spec.choices is not None and value not in item.spec.choices:
        raise ValueError(
            f"{where}: {item.name} must be one of {', '.join(map(str, item.spec.choices))}, "
            f"got {value!r}"
        )
    if item.spec.parse is not None and kind is not str:
        try:  # the flag's own checks, e.g. a count that must not be negative
            item.spec.parse(str(value))
        except (argparse.ArgumentTypeError, ValueError) as error:
            raise ValueError(f"{where}: {item.name}: {error}") from None
    return value


def _check_weights(item: Declared, value: Any, where: str) -> dict[str, float]:
    if not isinstance(value, dict):
        raise ValueError(
            f"{where}: {item.name} must be a table of component = weight, e.g. "
            f"{item.name} = {{ siphon_death_penalty = 0.3 }}, got {value!r}"
        )
    weights = {}
    for name, weight in value.items():
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise ValueError(f"{where}: {item.name}.{name} must be a number, got {weight!r}")
        if not math.isfinite(weight):
            raise ValueError(f"{where}: {item.name}.{name} must be finite, got {weight!r}")
        weights[str(name)] = float(weight)
    return weights


# ------------------------------------------------------------------ command line


class _Switch(argparse.BooleanOptionalAction):
    """`--x` / `--no-x` without argparse's own "(default: ...)" (the help says it)."""

    def __init__(self, *args: Any, help: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = help


def help_text(item: Declared, preset_value: Any = dataclasses.MISSING, preset: str = "") -> str:
    """The option's help, its default, and the value the default preset gives it."""
    text = f"{item.spec.help} (default: {item.show(item.default)}"
    if preset_value is not dataclasses.MISSING and preset_value != item.default:
        text += f"; preset {preset}: {item.show(preset_value)}"
    return (text + ")").replace("%", "%%")  # argparse formats help with %


def build_parser_for(
    items: Sequence[Declared],
    *,
    description: str,
    epilog: str = "",
    preset_values: Mapping[str, Any] | None = None,
    preset_name: str = "",
) -> argparse.ArgumentParser:
    """The argparse parser of `items`: one group per section, each option's default the
    declared one (so `parse_args([])` is the dataclass defaults, no preset)."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    groups = {section.name: parser.add_argument_group(section.title) for section in SECTIONS}
    preset_values = preset_values or {}
    for item in items:
        spec = item.spec
        kwargs: dict[str, Any] = {
            "dest": item.name,
            "default": item.default,
            "help": help_text(item, preset_values.get(item.name, dataclasses.MISSING), preset_name),
        }
        if spec.action == "switch":
            kwargs["action"] = _Switch
        elif spec.action == "store_true":
            kwargs["action"] = "store_true"
        else:
            kind, _ = base_type(item.type)
            kwargs["type"] = spec.parse or kind
            if spec.action == "optional":
                kwargs.update(nargs="?", const=spec.const)
            if spec.choices is not None and spec.parser_checks_choices:
                kwargs["choices"] = spec.choices
            if spec.metavar is not None:
                kwargs["metavar"] = spec.metavar
        groups[spec.section].add_argument(*item.flags, **kwargs)
    return parser


def explicit_values(parser: argparse.ArgumentParser, argv: Sequence[str]) -> dict[str, Any]:
    """{option name: value} of the options given on the command line (`argv`), parsed."""
    for action in parser._actions:  # argparse has no public way to suppress defaults
        action.default = argparse.SUPPRESS
    return vars(parser.parse_args(list(argv)))


# ------------------------------------------------------------- flag reference


def flag_reference(
    items: Sequence[Declared],
    presets: Mapping[str, Mapping[str, Any]],
    descriptions: Mapping[str, str],
) -> str:
    """docs/reference/trainer-flags.md: every flag by section, with its default, the
    values of the presets in `presets` and its help, after a table of `descriptions`
    (every shipped preset). Written by python/scripts/gen_flag_reference.py."""
    names = list(presets)
    lines = [
        "# Trainer flags",
        "",
        "<!-- Generated by python/scripts/gen_flag_reference.py from the option declarations",
        "     in python/hackmatrix/purejaxrl/config.py; do not edit by hand. -->",
        "",
        "Every option of the JAX trainer (`hackmatrix-train-jax`, "
        "`python/scripts/train_purejaxrl.py`, `python/scripts/train.sh`), generated from "
        "its declaration, the one place an option is written down. A value comes from the "
        "first of: the command line, the checkpoint (on a resume), the preset "
        "(`--preset`, `default` unless given), the option's default "
        "([`training.md`](../../specs/training.md) §1.8). What an option means beyond "
        "its line here: [`training.md`](../../specs/training.md) §1.1.",
        "",
        "## Presets",
        "",
        "| preset | what it is |",
        "| --- | --- |",
    ]
    lines += [f"| `{name}` | {text} |" for name, text in descriptions.items()]
    lines += [
        "",
        "A preset column below shows the value where the preset sets one other than the "
        "default. The **resume** column says where a resume takes the value from when "
        "its flag is not given: `checkpoint` (the value the run was trained with), "
        "`re-derived` (stored resolved, so auto-scaled again), or `not stored` (as on a "
        "fresh run: the preset's value or the default).",
    ]
    for section in SECTIONS:
        members = [item for item in items if item.spec.section == section.name]
        if not members:
            continue
        where = f"`[{section.name}]` in a preset" if section.in_presets else "command line only"
        replaced = {
            "preset": "any of its flags on the command line drops the preset's whole "
            f"[{section.name}] table",
            "checkpoint": "on a resume, any of its flags replaces the checkpoint's whole section",
        }
        notes = [replaced[layer] for layer in section.replaced_whole_by_flags]
        lines += ["", f"## {section.title}", "", f"{where}" + "".join(f"; {n}" for n in notes)]
        lines += [
            "",
            "| flag | default | " + " | ".join(f"`{n}`" for n in names) + " | resume | meaning |",
            "| --- | --- | " + " | ".join("---" for _ in names) + " | --- | --- |",
        ]
        for item in members:
            flags = _cell(", ".join(f"`{flag}`" for flag in _flag_forms(item)))
            if not item.in_presets:
                flags += " (command line only)" if section.in_presets else ""
            cells = [
                _cell(item.show(presets[n][item.name]))
                if item.name in presets[n] and presets[n][item.name] != item.default
                else ""
                for n in names
            ]
            resume = (
                ("checkpoint" if item.spec.from_checkpoint else "re-derived")
                if item.stored
                else "not stored"
            )
            lines.append(
                f"| {flags} | {_cell(item.show(item.default))} | "
                + " | ".join(cells)
                + f" | {resume} | {_cell(item.spec.help)} |"
            )
    return "\n".join(lines) + "\n"


def _flag_forms(item: Declared) -> Iterable[str]:
    for flag in item.flags:
        metavar = item.spec.metavar or (
            "{" + ",".join(map(str, item.spec.choices)) + "}"
            if item.spec.choices is not None
            else item.name.upper()
        )
        if item.spec.action == "switch":
            yield flag
            yield "--no-" + flag[2:]
        elif item.spec.action == "store_true":
            yield flag
        elif item.spec.action == "optional":
            yield f"{flag} [{metavar}]"
        else:
            yield f"{flag} {metavar}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
