"""The CLI process as a whole (protocol.md §2): arguments, line handling,
stdout discipline, exit status and determinism across processes."""

from __future__ import annotations

import json
import random
import subprocess

import pytest

pytestmark = pytest.mark.swift


def run(binary, stdin: bytes, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(binary), *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
    )


def responses(done: subprocess.CompletedProcess) -> list[dict]:
    """Every stdout line parsed; fails on anything that is not a JSON object line."""
    text = done.stdout.decode("utf-8")
    assert text == "" or text.endswith("\n")
    parsed = [json.loads(line) for line in text.splitlines()]
    assert all(isinstance(p, dict) for p in parsed)
    return parsed


def test_hello(swift_binary):
    (hello,) = responses(run(swift_binary, b'{"action": "hello"}\n'))
    assert hello["protocol"] == "hackmatrix-cli"
    assert hello["protocolVersion"] == "2.1"
    assert hello["engineVersion"] == "0.1.0"
    assert hello["actionCount"] == 28
    assert hello["observationShapes"] == {
        "player": [10],
        "programs": [23],
        "grid": [6, 6, 42],
        "flat": [1545],
    }
    assert len(hello["rewardComponents"]) == 15
    assert hello["traceFormat"] == {"format": "hackmatrix-trace", "version": 1}


def test_reset_with_seed_prints_an_observation(swift_binary):
    (reset,) = responses(run(swift_binary, b'{"action": "reset", "seed": 7}\n', "--headless-cli"))
    assert reset["seed"] == 7
    assert reset["info"]["step_index"] == 0
    assert len(reset["info"]["action_mask"]) == 28
    obs = reset["observation"]
    for key in (
        "playerRow",
        "playerCol",
        "playerHP",
        "credits",
        "energy",
        "stage",
        "turn",
        "dataSiphons",
        "baseAttack",
        "score",
        "showActivated",
        "scheduledTasksDisabled",
        "ownedPrograms",
        "cells",
        "cryptogHints",
    ):
        assert key in obs
    assert obs["stage"] == 1 and obs["playerHP"] == 3
    assert [len(row) for row in obs["cells"]] == [6] * 6
    assert sum(cell["isExit"] for row in obs["cells"] for cell in row) == 1
    assert all(
        cell["row"] == r and cell["col"] == c
        for r, row in enumerate(obs["cells"])
        for c, cell in enumerate(row)
    )


def test_arguments(swift_binary):
    quiet = run(swift_binary, b'{"action": "hello"}\n', "--headless-cli")
    assert quiet.returncode == 0 and quiet.stderr == b""
    noisy = run(swift_binary, b'{"action": "hello"}\n', "--headless-cli", "--info", "--debug")
    assert noisy.returncode == 0 and b"ready" in noisy.stderr
    assert len(responses(noisy)) == 1
    # An unknown argument is a usage error: nothing on stdout, a non-zero status.
    wrong = run(swift_binary, b'{"action": "hello"}\n', "--headless-cli", "--frobnicate")
    assert wrong.returncode == 2 and wrong.stdout == b""
    assert b"unknown argument --frobnicate" in wrong.stderr and b"usage:" in wrong.stderr


def test_every_line_is_answered_in_order_and_eof_exits_zero(swift_binary):
    lines = [
        b'{"action": "hello"}',
        b"",
        b"   ",
        b'{"action": "reset", "seed": 3}\r',
        b"not json",
        b'{"action": "getActionSpace"}',
        b'{"action": "getValidActions"}',
    ]
    # The last line has no final newline and must still be answered.
    done = run(swift_binary, b"\n".join(lines))
    assert done.returncode == 0
    answers = responses(done)
    assert len(answers) == len(lines)
    assert answers[0]["protocol"] == "hackmatrix-cli"
    assert [a.get("error", {}).get("code") for a in answers[1:3]] == ["parse_error", "parse_error"]
    assert answers[3]["seed"] == 3
    assert answers[4]["error"]["code"] == "parse_error"
    assert answers[5] == {"actionSpaceSize": 28}
    assert answers[6]["validActions"] == [
        a for a, ok in enumerate(answers[3]["info"]["action_mask"]) if ok
    ]


def test_empty_input_prints_nothing(swift_binary):
    done = run(swift_binary, b"")
    assert done.returncode == 0 and done.stdout == b""


def test_closed_stdout_ends_with_an_error_status(swift_binary):
    proc = subprocess.Popen(
        [str(swift_binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.stdout.close()
    try:
        proc.stdin.write(b'{"action": "hello"}\n' * 1000)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    assert proc.wait(timeout=30) != 0


def test_a_line_over_64_mib_is_accepted(swift_binary):
    padding = b" " * (64 * 1024 * 1024 + 17)
    done = run(
        swift_binary,
        b'{"action": "getActionSpace", "pad": "' + padding + b'"}\n{"action": "hello"}\n',
    )
    answers = responses(done)
    assert answers[0] == {"actionSpaceSize": 28}
    assert answers[1]["protocol"] == "hackmatrix-cli"


def episode_script(seed: int, policy_seed: int, steps: int) -> tuple[bytes, list[int]]:
    """Requests for one process: reset, then steps chosen from a fixed RNG.
    Actions may be masked; the engine must then answer with the same error."""
    rng = random.Random(policy_seed)
    actions = [rng.randrange(28) for _ in range(steps)]
    lines = [json.dumps({"action": "reset", "seed": seed})]
    lines += [json.dumps({"action": "step", "actionIndex": a}) for a in actions]
    lines.append(json.dumps({"action": "getState"}))
    return ("\n".join(lines) + "\n").encode(), actions


def test_seed_determinism_across_processes(swift_binary):
    script, _ = episode_script(seed=2024, policy_seed=5, steps=300)
    first = run(swift_binary, script)
    second = run(swift_binary, script)
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout
    answers = responses(first)
    assert len(answers) == 302
    assert any("observation" in a for a in answers[1:]), (
        "some random actions must have been allowed"
    )
    other = run(swift_binary, episode_script(seed=2025, policy_seed=5, steps=300)[0])
    assert (
        responses(other)[0]["observation"] != answers[0]["observation"]
        or other.stdout != first.stdout
    )


def test_reset_without_seed_reports_the_seed_it_chose(swift_binary):
    answers = responses(run(swift_binary, b'{"action": "reset"}\n{"action": "getState"}\n'))
    seed = answers[0]["seed"]
    assert isinstance(seed, int) and 0 <= seed <= 2**32 - 1
    assert answers[1]["state"]["seed"] == seed
