"""The one switch between the step's two compiled forms (issue 51): gathered or masked.

Under vmap, work that few envs need in a step (stage generation, programs, the
third and later enemy activations, spawns) can be done two ways with the same
results bit for bit:

- "gathered": the envs that need it are gathered into chunks inside a loop
  that runs until none is left (batching.apply_compacted), and searches stop
  as soon as they are done. Least arithmetic, and the fewest kernel launches.
- "masked": every env computes it and a select keeps it where needed, and
  every loop runs a fixed number of rounds. No loop whose trip count depends
  on the data and no gather/scatter around the work, but more arithmetic and
  more launches (the enemy activations run all 35 rounds).

The form is read when the step is traced: `HACKMATRIX_STEP_FORM` if set, else
"gathered" on every backend. The masked form was built for accelerators, but
on an H200 (specs/performance.md, issue 51) the gathered form ran 934 k steps/s
at 8,192 envs against its 643 k: the masked form's ~1,230 launches a step cost
more than the gathered form's ~800 plus its loops' reads of their predicates.
`using(form)` sets it for the code traced inside it (tests, benchmarks);
functions jitted at module level take the form as a static argument, so each
form is traced once.
"""

import contextlib
import os
from collections.abc import Iterator

GATHERED = "gathered"
MASKED = "masked"
FORMS = (GATHERED, MASKED)
ENV_VAR = "HACKMATRIX_STEP_FORM"

_override: list[str] = []  # innermost `using` last


def _checked(form: str, where: str = "") -> str:
    if form not in FORMS:
        raise ValueError(f"{where}step form must be one of {', '.join(FORMS)}, got {form!r}")
    return form


def default_form() -> str:
    """The environment's choice, else gathered (the faster form on the CPU and on the GPU
    measured so far)."""
    chosen = os.environ.get(ENV_VAR)
    return _checked(chosen, f"{ENV_VAR}={chosen!r}: the ") if chosen else GATHERED


def current() -> str:
    """The form to trace with now."""
    return _override[-1] if _override else default_form()


def masked() -> bool:
    return current() == MASKED


@contextlib.contextmanager
def using(form: str) -> Iterator[None]:
    """Trace the code inside with `form`."""
    _override.append(_checked(form))
    try:
        yield
    finally:
        _override.pop()
