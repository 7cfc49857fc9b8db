"""The one switch between the step's two compiled forms (issue 51): gathered or masked.

Under vmap, work that few envs need in a step (stage generation, programs, the
third and later enemy activations, spawns) can be done two ways with the same
results bit for bit:

- "gathered": the envs that need it are gathered into chunks inside a loop
  that runs until none is left (batching.apply_compacted), and searches stop
  as soon as they are done. Least arithmetic: the form a CPU runs fastest.
- "masked": every env computes it and a select keeps it where needed, and
  every loop runs a fixed number of rounds. More arithmetic but no loop whose
  trip count depends on the data (on a GPU each round of such a loop reads
  its predicate back to the host) and no gather/scatter around the work: the
  form for accelerators, where a step is bound by kernel launches.

The form is read when the step is traced: `HACKMATRIX_STEP_FORM` if set, else
"gathered" on the CPU backend and "masked" on any other. `using(form)` sets it
for the code traced inside it (tests, benchmarks); functions jitted at module
level take the form as a static argument, so each form is traced once.
"""

import contextlib
import os
from collections.abc import Iterator

import jax

GATHERED = "gathered"
MASKED = "masked"
FORMS = (GATHERED, MASKED)
ENV_VAR = "HACKMATRIX_STEP_FORM"

_override: list[str] = []  # innermost `using` last


def _checked(form: str) -> str:
    if form not in FORMS:
        raise ValueError(f"step form must be one of {FORMS}, got {form!r}")
    return form


def default_form() -> str:
    """The environment's choice, else the backend's: gathered on CPU, masked elsewhere."""
    chosen = os.environ.get(ENV_VAR)
    if chosen:
        return _checked(chosen)
    return GATHERED if jax.default_backend() == "cpu" else MASKED


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
