"""Field-by-field comparison of two engine outcomes, of two states, and of an
outcome against a trace's recorded expectations (``protocol.md`` §9.3).

Tolerances (``rewards.md`` §2, ``observation.md`` §10): observation bits,
mask and ``done`` exact; each reward component within 1e-4; the total within
1e-4 + 1e-6·|reference|. The state (``getState`` vs ``state_to_json``) must be
the identical JSON value. An outcome that carries its engine's own
``obs_digest`` (the Swift CLI's, ``protocol.md`` §5.9, in ``Outcome.extra``)
must match the digest of the other side's observation: that checks the Swift
numeric encoder, where the entry-by-entry comparison checks the Python
reference encoder of the Swift JSON observation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hackmatrix.names import REWARD_COMPONENT_NAMES
from parity.engines import Outcome
from parity.names import action_name, flat_index_name
from parity.trace import StartExpect, StepLine, obs_digest

COMPONENT_TOLERANCE = 1e-4
TOTAL_TOLERANCE = 1e-4
TOTAL_RELATIVE_TOLERANCE = 1e-6
MAX_LISTED = 40  # a report lists this many differing observation entries at most


@dataclass(frozen=True)
class Difference:
    field: str
    left: object  # the reference side (Swift, or the recorded expectation)
    right: object

    def line(self, left_name: str, right_name: str) -> str:
        return f"  {self.field}: {left_name} {self.left!r} vs {right_name} {self.right!r}"


def total_within(reference: float, other: float) -> bool:
    return abs(reference - other) <= TOTAL_TOLERANCE + TOTAL_RELATIVE_TOLERANCE * abs(reference)


def observation_differences(left: np.ndarray, right: np.ndarray) -> list[Difference]:
    # Compare bit patterns so that -0.0 vs +0.0 counts as equal (digest rule) and NaNs are caught.
    left_bits = (left + np.float32(0)).view(np.uint32)
    right_bits = (right + np.float32(0)).view(np.uint32)
    differing = np.flatnonzero(left_bits != right_bits)
    out = [
        Difference(
            f"obs {flat_index_name(int(i))} = flat[{int(i)}]", float(left[i]), float(right[i])
        )
        for i in differing[:MAX_LISTED]
    ]
    if len(differing) > MAX_LISTED:
        out.append(Difference(f"obs: {len(differing) - MAX_LISTED} more differing entries", "", ""))
    return out


def mask_differences(left: np.ndarray, right: np.ndarray) -> list[Difference]:
    return [
        Difference(f"mask[{action_name(int(a))}]", bool(left[a]), bool(right[a]))
        for a in np.flatnonzero(left != right)
    ]


def component_differences(left: dict, right: dict) -> list[Difference]:
    return [
        Difference(f"reward_components.{k}", left[k], right[k])
        for k in REWARD_COMPONENT_NAMES
        if abs(left[k] - right[k]) > COMPONENT_TOLERANCE
    ]


def reported_digest_differences(left: Outcome, right: Outcome) -> list[Difference]:
    """Each engine-reported ``obs_digest`` against the digest of the other side's observation."""
    diffs = []
    for reporter, other, field in (
        (left, right, "obs_digest (left engine's own)"),
        (right, left, "obs_digest (right engine's own)"),
    ):
        reported = reporter.extra.get("obs_digest")
        if reported is not None:
            expected = obs_digest(other.obs)
            if reported != expected:
                diffs.append(
                    Difference(field, reported, expected)
                    if reporter is left
                    else Difference(field, expected, reported)
                )
    return diffs


def compare_outcomes(left: Outcome, right: Outcome) -> list[Difference]:
    """Every difference between two engines' results of the same start or step."""
    if left.rejected or right.rejected:  # a rejected step is a divergence (protocol.md §9.3)
        return [
            Difference("action accepted", left.rejected or "accepted", right.rejected or "accepted")
        ]
    diffs = observation_differences(left.obs, right.obs) + reported_digest_differences(left, right)
    diffs += mask_differences(left.mask, right.mask)
    if left.components is not None and right.components is not None:
        diffs += component_differences(left.components, right.components)
    if (
        left.reward is not None
        and right.reward is not None
        and not total_within(left.reward, right.reward)
    ):
        diffs.append(Difference("reward", left.reward, right.reward))
    if left.done != right.done:
        diffs.append(Difference("done", left.done, right.done))
    return diffs


def state_differences(left, right, path: str = "state") -> list[Difference]:
    """JSON paths where two canonical states differ (exact; 1 and 1.0 are the same number)."""
    if isinstance(left, dict) and isinstance(right, dict):
        out: list[Difference] = []
        for key in sorted(set(left) | set(right)):
            if key not in right:
                out.append(Difference(f"{path}.{key}", left[key], "<missing>"))
            elif key not in left:
                out.append(Difference(f"{path}.{key}", "<missing>", right[key]))
            else:
                out += state_differences(left[key], right[key], f"{path}.{key}")
        return out
    if isinstance(left, list) and isinstance(right, list):
        out = []
        for i in range(max(len(left), len(right))):
            if i >= len(right):
                out.append(Difference(f"{path}[{i}]", left[i], "<missing>"))
            elif i >= len(left):
                out.append(Difference(f"{path}[{i}]", "<missing>", right[i]))
            else:
                out += state_differences(left[i], right[i], f"{path}[{i}]")
        return out
    same_kind = isinstance(left, bool) == isinstance(right, bool)
    if not same_kind or left != right:
        return [Difference(path, left, right)]
    return []


def expectation_differences(expect: StepLine | StartExpect, got: Outcome) -> list[Difference]:
    """Where an engine's outcome disagrees with what the trace recorded (left = recorded)."""
    diffs: list[Difference] = []
    if got.rejected:
        return [Difference("action accepted", "accepted", got.rejected)]
    if expect.obs_digest is not None:
        digest = obs_digest(got.obs)
        if digest != expect.obs_digest:
            diffs.append(Difference("obs_digest", expect.obs_digest, digest))
        reported = got.extra.get("obs_digest")
        if reported is not None and reported != expect.obs_digest:
            diffs.append(Difference("obs_digest (engine's own)", expect.obs_digest, reported))
    if expect.mask is not None:
        diffs += mask_differences(np.asarray(expect.mask, bool), got.mask)
    if isinstance(expect, StepLine):
        if expect.reward_components is not None and got.components is not None:
            diffs += component_differences(expect.reward_components, got.components)
        if expect.reward is not None and not total_within(expect.reward, got.reward):
            diffs.append(Difference("reward", expect.reward, got.reward))
        if expect.done is not None and expect.done != got.done:
            diffs.append(Difference("done", expect.done, got.done))
    return diffs
