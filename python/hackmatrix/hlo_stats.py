"""Count the pieces of a compiled XLA program: fusions, while loops and instructions.

On a GPU each fusion of a step is about one kernel launch and each round of a
while loop whose trip count depends on the data reads its predicate back to
the host, so these counts predict how a latency-bound step scales
(specs/performance.md, "On an NVIDIA H100"). They are read from the optimized
HLO text of any backend (`jax.jit(f).lower(...).compile().as_text()`):

- a computation named in a fusion's `calls=` is the body of that fusion; its
  instructions run inside the kernel and are not counted as separate ops;
- a while loop's trip count is known when XLA wrote `known_trip_count` into its
  `backend_config` (it proves the count from the loop's induction variable);
  every other while loop is data-dependent;
- `launches` estimates the fusions a call runs: each computation's fusions
  times the trip counts of the loops around it (data-dependent loops count one
  round, so for them it is a lower bound).
"""

import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

_HEADER = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s+(ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
_CALLS = re.compile(r"\bcalls=%?([\w.\-]+)")
_BODY = re.compile(r"\bbody=%?([\w.\-]+)")
_CONDITION = re.compile(r"\bcondition=%?([\w.\-]+)")
_BRANCHES = re.compile(r"\bbranch_computations=\{([^}]*)\}")
_TRUE_FALSE = re.compile(r"\b(?:true|false)_computation=%?([\w.\-]+)")
_TO_APPLY = re.compile(r"\bto_apply=%?([\w.\-]+)")
_TRIP = re.compile(r'"known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"?(\d+)"?')


@dataclass
class Instruction:
    name: str
    opcode: str
    text: str


@dataclass
class HloStats:
    """What one compiled program holds (see the module docstring)."""

    fusions: int = 0
    while_loops: int = 0
    data_dependent_loops: int = 0
    fixed_loops: int = 0
    fixed_trip_counts: list[int] = field(default_factory=list)
    conditionals: int = 0
    instructions: int = 0  # outside fusion bodies: the ops the runtime schedules
    fused_instructions: int = 0  # inside fusion bodies
    launches: int = 0  # fusions run per call, loops unrolled (data-dependent ones once)
    top_opcodes: dict[str, int] = field(default_factory=dict)  # outside fusions

    def as_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        trips = ",".join(str(n) for n in sorted(self.fixed_trip_counts))
        return (
            f"fusions {self.fusions}, while loops {self.while_loops} "
            f"({self.data_dependent_loops} data-dependent, {self.fixed_loops} fixed"
            f"{': trips ' + trips if trips else ''}), conditionals {self.conditionals}, "
            f"instructions {self.instructions} (+{self.fused_instructions} fused), "
            f"fusion launches per call >= {self.launches}"
        )


def _tuple_end(text: str) -> int:
    """Index just past the parenthesis that closes the one `text` starts with."""
    depth = 0
    for index, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return index + 1
    return len(text)


def _opcode(rhs: str) -> str:
    """The opcode of an instruction's right-hand side `shape opcode(operands), attrs`."""
    start = _tuple_end(rhs) if rhs.startswith("(") else rhs.find(" ")
    m = re.match(r"\s*([\w\-]+)", rhs[start:])
    return m.group(1) if m else "?"


def parse_computations(hlo_text: str) -> tuple[dict[str, list[Instruction]], str]:
    """{computation name: its instructions} and the entry computation's name."""
    computations: dict[str, list[Instruction]] = {}
    entry = ""
    current: list[Instruction] | None = None
    for line in hlo_text.splitlines():
        if current is None or not line.startswith(" "):
            header = _HEADER.match(line)
            if header and not line.startswith("HloModule"):
                current = computations.setdefault(header.group(2), [])
                if header.group(1):
                    entry = header.group(2)
                continue
            if line.startswith("}"):
                current = None
            continue
        inst = _INSTRUCTION.match(line)
        if inst:
            rhs = inst.group(3)
            current.append(Instruction(inst.group(2), _opcode(rhs), rhs))
    return computations, entry


def _names(pattern: re.Pattern, text: str) -> Iterator[str]:
    for m in pattern.finditer(text):
        yield m.group(1)


def hlo_stats(hlo_text: str, top: int = 12) -> HloStats:
    """Count fusions, while loops (fixed vs data-dependent) and instructions of optimized HLO."""
    computations, entry = parse_computations(hlo_text)
    fused = {
        name
        for insts in computations.values()
        for inst in insts
        if inst.opcode == "fusion"
        for name in _names(_CALLS, inst.text)
    }
    stats = HloStats()
    opcodes: dict[str, int] = {}
    for name, insts in computations.items():
        if name in fused:
            stats.fused_instructions += len(insts)
            continue
        for inst in insts:
            stats.instructions += 1
            opcodes[inst.opcode] = opcodes.get(inst.opcode, 0) + 1
            if inst.opcode == "fusion":
                stats.fusions += 1
            elif inst.opcode == "while":
                stats.while_loops += 1
                trip = _TRIP.search(inst.text)
                if trip:
                    stats.fixed_loops += 1
                    stats.fixed_trip_counts.append(int(trip.group(1)))
                else:
                    stats.data_dependent_loops += 1
            elif inst.opcode == "conditional":
                stats.conditionals += 1
    stats.top_opcodes = dict(sorted(opcodes.items(), key=lambda kv: -kv[1])[:top])
    stats.launches = _launches(computations, fused, entry, set())
    return stats


def _launches(
    computations: dict[str, list[Instruction]], fused: set[str], name: str, seen: set[str]
) -> int:
    """Fusions run by one call of computation `name`, through its loops and calls."""
    if name not in computations or name in fused or name in seen:
        return 0
    seen = seen | {name}
    total = 0
    for inst in computations[name]:
        if inst.opcode == "fusion":
            total += 1
        elif inst.opcode == "while":
            trip = _TRIP.search(inst.text)
            rounds = int(trip.group(1)) if trip else 1
            inner = sum(
                _launches(computations, fused, c, seen)
                for pattern in (_BODY, _CONDITION)
                for c in _names(pattern, inst.text)
            )
            total += rounds * inner
        elif inst.opcode == "conditional":
            branches = [
                c.strip().lstrip("%")
                for m in _BRANCHES.finditer(inst.text)
                for c in m.group(1).split(",")
            ] + list(_names(_TRUE_FALSE, inst.text))
            total += max((_launches(computations, fused, c, seen) for c in branches), default=0)
        elif inst.opcode in ("call", "async-start"):
            for pattern in (_TO_APPLY, _CALLS):
                total += sum(
                    _launches(computations, fused, c, seen) for c in _names(pattern, inst.text)
                )
    return total


def compiled_stats(compiled: object) -> HloStats:
    """HloStats of a `jax.stages.Compiled` (its optimized HLO text)."""
    return hlo_stats(compiled.as_text())  # type: ignore[attr-defined]


def to_json(stats: HloStats) -> str:
    return json.dumps(stats.as_dict(), indent=2)
