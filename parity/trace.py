"""The on-disk trace format (``protocol.md`` §9): read, validate, write.

A trace is one episode: a header, an optional ``setState`` start, optional
start expectations and the step lines. Reading validates everything and
raises :class:`TraceFormatError` naming the file and line, so a broken corpus
file is reported instead of half-replayed.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hackmatrix.names import ACTION_COUNT, OBS_SIZE, REWARD_COMPONENT_NAMES

FORMAT = "hackmatrix-trace"
VERSION = 1
SOURCES = ("swift", "jax", "oracle", "manual")
UINT32_MAX = 0xFFFFFFFF


class TraceFormatError(ValueError):
    """A trace file that does not follow protocol.md §9."""


def obs_digest(flat) -> str:
    """``sha256:`` + hex of the 1545 little-endian float32 values, -0.0 written as +0.0 (§9.2)."""
    values = np.asarray(flat, dtype=np.float32).reshape(-1)
    if values.shape != (OBS_SIZE,):
        raise ValueError(f"a flat observation has {OBS_SIZE} entries, got {values.shape[0]}")
    # Adding +0.0 turns -0.0 into +0.0 and leaves every other value (NaN bits aside) unchanged.
    canonical = (values + np.float32(0.0)).astype("<f4")
    return "sha256:" + hashlib.sha256(canonical.tobytes()).hexdigest()


@dataclass
class StartExpect:
    obs_digest: str | None = None
    mask: list[bool] | None = None


@dataclass
class StepLine:
    step: int
    action: int
    obs_digest: str | None = None
    mask: list[bool] | None = None
    reward: float | None = None
    reward_components: dict[str, float] | None = None
    done: bool | None = None

    def to_json(self) -> dict:
        line: dict = {"type": "step", "step": self.step, "action": self.action}
        for key in ("obs_digest", "mask", "reward", "reward_components", "done"):
            value = getattr(self, key)
            if value is not None:
                line[key] = value
        return line


@dataclass
class Trace:
    seed: int | None
    source: str = "manual"
    note: str = ""
    start_state: dict | None = None
    start: StartExpect | None = None
    steps: list[StepLine] = field(default_factory=list)
    path: str | None = None  # where it was read from, for reports

    @property
    def actions(self) -> list[int]:
        return [s.action for s in self.steps]

    @property
    def name(self) -> str:
        return self.path or f"<trace seed={self.seed}>"

    def header(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "seed": self.seed,
            "source": self.source,
            "note": self.note,
        }

    def lines(self) -> list[dict]:
        out = [self.header()]
        if self.start_state is not None:
            out.append({"type": "setState", "state": self.start_state})
        if self.start is not None:
            start: dict = {"type": "start"}
            if self.start.obs_digest is not None:
                start["obs_digest"] = self.start.obs_digest
            if self.start.mask is not None:
                start["mask"] = self.start.mask
            out.append(start)
        out.extend(s.to_json() for s in self.steps)
        return out

    def without_expectations(self, source: str = "manual", note: str | None = None) -> Trace:
        """Same start and actions, nothing recorded (a hand-written trace)."""
        return Trace(
            seed=self.seed,
            source=source,
            note=self.note if note is None else note,
            start_state=self.start_state,
            steps=[StepLine(step=i, action=a) for i, a in enumerate(self.actions)],
        )


def _check(condition: bool, where: str, message: str) -> None:
    if not condition:
        raise TraceFormatError(f"{where}: {message}")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def _mask(value, where: str) -> list[bool]:
    _check(
        isinstance(value, list)
        and len(value) == ACTION_COUNT
        and all(isinstance(v, bool) for v in value),
        where,
        f"mask must be a list of {ACTION_COUNT} booleans",
    )
    return list(value)


def _digest(value, where: str) -> str:
    ok = (
        isinstance(value, str)
        and value.startswith("sha256:")
        and len(value) == 71
        and all(ch in "0123456789abcdef" for ch in value[7:])
    )
    _check(ok, where, 'obs_digest must be "sha256:" followed by 64 lower-case hex digits')
    return value


def _components(value, where: str) -> dict[str, float]:
    _check(isinstance(value, dict), where, "reward_components must be an object")
    missing = [k for k in REWARD_COMPONENT_NAMES if k not in value]
    extra = [k for k in value if k not in REWARD_COMPONENT_NAMES]
    _check(
        not missing and not extra,
        where,
        f"reward_components must have exactly the 15 keys (missing {missing}, unknown {extra})",
    )
    for key, v in value.items():
        _check(_is_number(v), where, f"reward_components.{key} must be a finite number")
    return {k: float(value[k]) for k in REWARD_COMPONENT_NAMES}


def parse_lines(objects: list, name: str = "<trace>") -> Trace:
    """Builds a trace from already-decoded JSON lines, validating §9.1."""
    _check(len(objects) > 0, name, "empty trace (no header line)")
    head = objects[0]
    where = f"{name}:1"
    _check(isinstance(head, dict), where, "the header must be a JSON object")
    _check(head.get("format") == FORMAT, where, f'header "format" must be "{FORMAT}"')
    _check(
        head.get("version") == VERSION and _is_int(head.get("version")),
        where,
        f'header "version" must be {VERSION}',
    )
    seed = head.get("seed")
    _check(
        seed is None or (_is_int(seed) and 0 <= seed <= UINT32_MAX),
        where,
        "header seed must be null or an integer in 0..4294967295",
    )
    source = head.get("source", "")
    _check(
        isinstance(source, str) and source.split(" ")[0] in SOURCES,
        where,
        f"header source must start with one of {SOURCES}",
    )
    note = head.get("note", "")
    _check(isinstance(note, str), where, "header note must be a string")
    trace = Trace(seed=seed, source=source, note=note, path=name)

    index = 1
    if (
        index < len(objects)
        and isinstance(objects[index], dict)
        and objects[index].get("type") == "setState"
    ):
        where = f"{name}:{index + 1}"
        state = objects[index].get("state")
        _check(isinstance(state, dict), where, "setState line needs a state object")
        state_seed = state.get("seed", 0)
        _check(
            seed is None or seed == state_seed,
            where,
            f"header seed {seed} must be null or equal state.seed {state_seed}",
        )
        trace.start_state = state
        index += 1
    _check(
        trace.start_state is not None or seed is not None,
        f"{name}:1",
        "header seed is null but no setState line follows",
    )

    if (
        index < len(objects)
        and isinstance(objects[index], dict)
        and objects[index].get("type") == "start"
    ):
        where = f"{name}:{index + 1}"
        line = objects[index]
        trace.start = StartExpect(
            obs_digest=_digest(line["obs_digest"], where) if "obs_digest" in line else None,
            mask=_mask(line["mask"], where) if "mask" in line else None,
        )
        index += 1

    for position, line in enumerate(objects[index:]):
        where = f"{name}:{index + position + 1}"
        _check(
            isinstance(line, dict) and line.get("type") == "step",
            where,
            'expected a step line ({"type": "step", ...})',
        )
        _check(
            line.get("step") == position and _is_int(line.get("step")),
            where,
            f"step must be {position} (steps are numbered 0, 1, 2, ... without gaps)",
        )
        action = line.get("action")
        _check(
            _is_int(action) and 0 <= action < ACTION_COUNT, where, "action must be an integer 0..27"
        )
        _check(
            not (trace.steps and trace.steps[-1].done),
            where,
            "no step may follow one with done: true",
        )
        step = StepLine(step=position, action=action)
        if "obs_digest" in line:
            step.obs_digest = _digest(line["obs_digest"], where)
        if "mask" in line:
            step.mask = _mask(line["mask"], where)
        if "reward" in line:
            _check(_is_number(line["reward"]), where, "reward must be a finite number")
            step.reward = float(line["reward"])
        if "reward_components" in line:
            step.reward_components = _components(line["reward_components"], where)
        if "done" in line:
            _check(isinstance(line["done"], bool), where, "done must be a boolean")
            step.done = line["done"]
        trace.steps.append(step)
    return trace


def _open_text(path: Path, mode: str):
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, mode + "b"), encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def read_trace(path: str | Path) -> Trace:
    path = Path(path)
    objects = []
    with _open_text(path, "r") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                raise TraceFormatError(f"{path}:{number}: empty line")
            try:
                objects.append(json.loads(raw))
            except json.JSONDecodeError as error:
                raise TraceFormatError(f"{path}:{number}: not valid JSON ({error.msg})") from None
    return parse_lines(objects, str(path))


def write_trace(trace: Trace, path: str | Path) -> Path:
    """Writes the trace (gzip when the name ends in .gz); validates it first."""
    path = Path(path)
    lines = trace.lines()
    parse_lines(
        json.loads(json.dumps(lines)), str(path)
    )  # never write a file we could not read back
    text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode("utf-8")
    if path.suffix == ".gz":
        text = gzip.compress(text, mtime=0)  # no time stamp: rebuilding the corpus changes no bytes
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text)
    return path


def find_traces(paths: Iterable[str | Path]) -> list[Path]:
    """Trace files named directly, or found (recursively, sorted) inside folders."""
    found: list[Path] = []
    for entry in paths:
        entry = Path(entry)
        if entry.is_dir():
            found += sorted(p for p in entry.rglob("*") if p.name.endswith((".jsonl", ".jsonl.gz")))
        elif entry.is_file():
            found.append(entry)
        else:
            raise FileNotFoundError(f"no trace file or folder at {entry}")
    return found
