"""Where each setting comes from (training.md §1.8).

Four layers, each over the one before: the option defaults (the dataclass fields of
`config.py`), the preset (`--preset`, `default` unless given), the checkpoint's stored
config on a resume, and the command line. Two sections are taken as a whole rather than
option by option (`options.Section.replaced_whole_by_flags`): any reward flag on the
command line drops the preset's [reward] table, and any curriculum flag drops the preset's
and, on a resume, the checkpoint's curriculum. `resolve` returns the config, the run
options, where each value came from and the start-up lines that say what was continued
or dropped; the rest of this module prints and checks the result.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import config as cfg
from .config import CONFIG_FLAGS, OPTION_BY_NAME, OPTIONS, RUN_FLAGS, RunOptions, TrainConfig
from .options import CHECKPOINT, COMMAND_LINE, DEFAULT, SECTIONS, Declared, Section
from .presets import Preset, load_preset, shipped_names

# Set by the driver after the layers, where a value is changed for the machine or budget.
AUTO_TUNED = "auto-tune"
AUTO_SCALED = "auto-scaled"
BUDGET_RAISED = "raised: 3 updates"
# What a resume handles itself rather than noting (cli.py): the batch shape is warned
# about, another network is refused.
BATCH_SHAPE = ("num_envs", "num_steps")
NETWORK_SHAPE = ("network", "hidden_dim", "num_layers", "value_trunk")


@dataclasses.dataclass
class Resolved:
    """A resolved configuration and where each of its values came from."""

    config: TrainConfig
    run: RunOptions
    preset: Preset
    sources: dict[str, str]  # option name -> DEFAULT, "preset NAME", CHECKPOINT, COMMAND_LINE...
    explicit: frozenset[str]  # the options given on the command line
    stored: dict[str, Any] | None  # the checkpoint's stored config, on a resume
    lines: list[str]  # start-up lines: preset tables dropped, settings continued

    def to_json(self) -> dict[str, Any]:
        """What `--print-config` prints."""
        return {
            "preset": {"name": self.preset.name, "path": self.preset.path},
            "config": self.config.to_dict(),
            "run": dataclasses.asdict(self.run),
            "sources": dict(self.sources),
        }


def resolve(
    cli_values: Mapping[str, Any], preset: Preset, stored: Mapping[str, Any] | None = None
) -> Resolved:
    """Layer the option defaults, `preset`, the checkpoint's `stored` config (on a resume,
    else None) and the command line's `cli_values` (the flags given, parsed)."""
    explicit = frozenset(cli_values)
    values = {item.name: item.default for item in OPTIONS}
    sources = dict.fromkeys(values, DEFAULT)
    lines = _apply_preset(values, sources, preset, explicit, report=stored is None)
    if stored is not None:
        lines += _apply_checkpoint(values, sources, stored, explicit)
    for name, value in cli_values.items():
        values[name], sources[name] = value, COMMAND_LINE
    return Resolved(
        config=TrainConfig(**{name: values[name] for name in CONFIG_FLAGS}),
        run=RunOptions(**{name: values[name] for name in RUN_FLAGS}),
        preset=preset,
        sources=sources,
        explicit=explicit,
        stored=None if stored is None else dict(stored),
        lines=lines,
    )


def resolve_command_line(argv: Sequence[str], stored: Mapping[str, Any] | None = None) -> Resolved:
    """`resolve` for a command line: its flags, the preset it names (or `default`)."""
    cli_values = cfg.command_line_values(argv)
    preset = load_preset(cli_values.get("preset", cfg.DEFAULT_PRESET))
    return resolve(cli_values, preset, stored)


def _members(section: Section) -> list[Declared]:
    return [item for item in OPTIONS if item.spec.section == section.name]


def _given(section: Section, explicit: Iterable[str]) -> list[str]:
    """The flags of `section` given on the command line."""
    return [item.flag for item in _members(section) if item.name in explicit]


def _apply_preset(values, sources, preset: Preset, explicit, report: bool) -> list[str]:
    """The preset's values over the defaults, but none of a section that drops the preset
    as a whole where the command line gives one of its flags. Returns the lines saying so
    (when `report`: on a resume the checkpoint decides those sections instead)."""
    lines = []
    dropped = set()
    for section in SECTIONS:
        given = _given(section, explicit)
        if "preset" not in section.replaced_whole_by_flags or not given:
            continue
        dropped.add(section.name)
        if report and any(OPTION_BY_NAME[n].spec.section == section.name for n in preset.values):
            lines.append(
                f"{section.label}: the command line's ({', '.join(given)} given); "
                f"the {preset.label} [{section.name}] table is not used"
            )
    for name, value in preset.values.items():
        if OPTION_BY_NAME[name].spec.section not in dropped:
            values[name], sources[name] = copy.deepcopy(value), preset.label
    return lines


def _apply_checkpoint(values, sources, stored: Mapping[str, Any], explicit) -> list[str]:
    """The checkpoint's training options over the preset: those it stores resolved are
    re-derived instead, and a section replaced as a whole by a given flag is skipped. A
    key an older checkpoint lacks is the option's default, the value every option had
    before it existed. Returns the "continuing the checkpoint's" lines, one per section,
    naming the values a fresh run of this command line would not have had."""
    lines = []
    for section in SECTIONS:
        if "checkpoint" in section.replaced_whole_by_flags and _given(section, explicit):
            continue
        continued = []
        for item in _members(section):
            if not (item.stored and item.spec.from_checkpoint):
                continue
            value = copy.deepcopy(stored.get(item.name, item.default))
            if item.name not in explicit and value != values[item.name]:
                continued.append(f"{item.name}={_plain(item, value)}")
            values[item.name], sources[item.name] = value, CHECKPOINT
        if continued:
            lines.append(
                f"{section.label}: continuing the checkpoint's {', '.join(continued)}"
                + _whole_hint(section)
            )
    return lines


def _whole_hint(section: Section) -> str:
    if "checkpoint" not in section.replaced_whole_by_flags:
        return ""
    prefix = os.path.commonprefix([item.flag for item in _members(section)])
    return f" (any {prefix}* flag replaces them as a whole)"


def _plain(item: Declared, value: Any) -> str:
    """A value in a start-up note: weights as on the command line, the rest as Python."""
    return cfg.format_reward_weights(value) if item.spec.plural else str(value)


# ------------------------------------------------------------------ resume notes


def resume_changes(stored: Mapping[str, Any], config: TrainConfig) -> list[str]:
    """A `Note: ... changes from ... to ...` line for each stored training option this run
    trains with another value (a flag given on the resume, or a value re-derived), but the
    batch shape and the network, which the driver warns about or refuses."""
    lines = []
    for item in OPTIONS:
        if not item.stored or item.name in BATCH_SHAPE + NETWORK_SHAPE:
            continue
        was, now = stored.get(item.name, item.default), getattr(config, item.name)
        if was != now:
            verb = "change" if item.spec.plural else "changes"
            lines.append(
                f"Note: {item.label} {verb} from {_plain(item, was)} to {_plain(item, now)}"
            )
    return lines


# ------------------------------------------------------------- the start-up table

# Sizes derived from the options (§1.2), shown after the section they follow from.
DERIVED_ROWS = {
    "rollout": ("batch_size", "num_updates"),
    "ppo": ("minibatch_size", "gradient_steps"),
}


def config_table(resolved: Resolved) -> list[str]:
    """The start-up configuration: every training option with its value and source, the
    sizes derived from them, and the run options not at their defaults. A curriculum
    appears only when one is set (the "Curriculum:" line says so otherwise), the search's
    options only with expert iteration."""
    config, sources = resolved.config, resolved.sources
    rows: list[tuple[str, str, str] | str] = []
    for section in SECTIONS:
        shown = [item for item in _members(section) if _shown(item, resolved)]
        if not shown:
            continue
        rows.append(section.title)
        for item in shown:
            value = getattr(config if item.stored else resolved.run, item.name)
            rows.append((item.name, item.show(value), sources[item.name]))
        for name in DERIVED_ROWS.get(section.name, ()):
            rows.append((name, f"{getattr(config, name):,}", "derived"))
    cells = [row for row in rows if isinstance(row, tuple)]
    name_width = max(len(row[0]) for row in cells)
    value_width = max(14, *(len(row[1]) for row in cells))
    lines = [
        f"   {row[0]:<{name_width}} {row[1]:>{value_width}}  {row[2]}"
        if isinstance(row, tuple)
        else f" {row}"
        for row in rows
    ]
    title = f" Configuration ({resolved.preset.label})"
    width = max(len(line) for line in (*lines, title)) + 1
    rule = "+" + "-" * width + "+"
    return [
        rule,
        "|" + title.ljust(width) + "|",
        rule,
        *("|" + line.ljust(width) + "|" for line in lines),
        rule,
    ]


def _shown(item: Declared, resolved: Resolved) -> bool:
    if not item.stored:  # run options: those set by a preset or the command line
        return resolved.sources[item.name] != DEFAULT
    if item.spec.section == "curriculum":
        return any(getattr(resolved.config, n) != OPTION_BY_NAME[n].default for n in CURRICULUM)
    if item.name in SEARCH:  # the search's options mean something for expert iteration only
        return resolved.config.algorithm == cfg.EXPERT_ITERATION
    return True


CURRICULUM = tuple(item.name for item in OPTIONS if item.spec.section == "curriculum")
SEARCH = tuple(item.name for item in OPTIONS if item.name.startswith("search_"))


def parser_with_presets() -> Any:
    """The command line with the default preset's values in each flag's help and the
    shipped presets listed after it (what `--help` shows)."""
    default = load_preset(cfg.DEFAULT_PRESET)
    listed = "\n".join(f"  {name:<10} {load_preset(name).description}" for name in shipped_names())
    rules = textwrap.fill(
        "A value comes from the first of: the command line, the checkpoint (on a resume), "
        "the preset, the option's default. A reward flag on the command line drops the "
        "preset's whole reward table; a curriculum flag its curriculum (training.md §1.8; "
        "every flag: docs/reference/trainer-flags.md).",
        width=88,
    )
    epilog = (
        f"presets (--preset NAME, or the path of a TOML file of the same form):\n{listed}\n\n"
        + rules
    )
    return cfg.build_parser(default.values, cfg.DEFAULT_PRESET, epilog)


def flag_reference_markdown() -> str:
    """docs/reference/trainer-flags.md, from the option declarations and the shipped
    presets (a preset that sets nothing, `canonical`, gets no column)."""
    from .options import flag_reference

    presets = {name: load_preset(name) for name in shipped_names()}
    columns = {name: p.values for name, p in presets.items() if p.values}
    descriptions = {name: p.description for name, p in presets.items()}
    return flag_reference(OPTIONS, columns, descriptions)
