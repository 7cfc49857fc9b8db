"""The Swift CLI's own observation digest (protocol.md §5.9) on the parity path:
the harness compares it with the digest of the other engine's observation, and
reports a wrong one as a divergence."""

from __future__ import annotations

import numpy as np
import pytest

from hackmatrix.names import ACTION_COUNT, OBS_SIZE
from parity.compare import compare_outcomes, expectation_differences
from parity.engines import Outcome
from parity.trace import StepLine, obs_digest


def _outcome(obs: np.ndarray, reported: str | None = None) -> Outcome:
    extra = {"obs_digest": reported} if reported is not None else {}
    return Outcome(
        obs=obs,
        mask=np.ones(ACTION_COUNT, bool),
        reward=0.0,
        components=None,
        done=False,
        extra=extra,
    )


def test_a_reported_digest_that_matches_the_other_side_passes():
    obs = np.zeros(OBS_SIZE, np.float32)
    obs[3] = 0.25
    assert compare_outcomes(_outcome(obs, obs_digest(obs)), _outcome(obs.copy())) == []


def test_a_wrong_reported_digest_is_a_difference_even_when_the_entries_agree():
    obs = np.zeros(OBS_SIZE, np.float32)
    other = obs.copy()
    other[40] = 1.0
    # Left's JSON observation decodes to `obs`, but its own encoder hashed `other`.
    diffs = compare_outcomes(_outcome(obs, obs_digest(other)), _outcome(obs.copy()))
    assert [d.field for d in diffs] == ["obs_digest (left engine's own)"]
    assert diffs[0].left == obs_digest(other) and diffs[0].right == obs_digest(obs)
    # Reported on the right side: the reference value stays on the left.
    diffs = compare_outcomes(_outcome(obs.copy()), _outcome(obs, obs_digest(other)))
    assert [(d.field, d.left, d.right) for d in diffs] == [
        ("obs_digest (right engine's own)", obs_digest(obs), obs_digest(other))
    ]


def test_a_wrong_reported_digest_disagrees_with_a_recorded_trace():
    obs = np.zeros(OBS_SIZE, np.float32)
    line = StepLine(step=0, action=0, obs_digest=obs_digest(obs))
    got = _outcome(obs, "sha256:" + "0" * 64)
    assert [d.field for d in expectation_differences(line, got)] == ["obs_digest (engine's own)"]


@pytest.mark.swift
def test_swift_adapter_carries_the_cli_digest_of_its_observation(swift_binary):
    from parity.engines import SwiftAdapter

    swift = SwiftAdapter(str(swift_binary))
    try:
        outcomes = [swift.start(11, None)]
        for _ in range(5):
            outcomes.append(swift.step(int(np.flatnonzero(outcomes[-1].mask)[0])))
            if outcomes[-1].done:
                break
    finally:
        swift.close()
    # The CLI's digest (its numeric encoder) equals the digest of the Python reference
    # encoding of its JSON observation.
    assert all(o.extra["obs_digest"] == obs_digest(o.obs) for o in outcomes)
