"""The real CLI under a stream of malformed requests (protocol.md §2, §7).

More than a thousand bad lines, drawn with a seeded RNG from many families
(broken JSON, invalid UTF-8, wrong types, unknown commands, out-of-range and
masked actions, invalid setState states, huge numbers, deep nesting, empty
lines), are interleaved with getState. Every bad line must get exactly one
error line with the expected code, the game must stay exactly as it was, and
the process must keep answering valid requests, also after the episode ended.
"""

from __future__ import annotations

import copy
import json
import random
import select
import subprocess

import pytest

pytestmark = pytest.mark.swift

SEED = 20240611
BAD_LINES = 1200


class Cli:
    """The CLI as a child process, one request line in, one response line out."""

    def __init__(self, binary):
        self.proc = subprocess.Popen(
            [str(binary), "--headless-cli"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def raw(self, line: bytes, timeout: float = 20.0) -> bytes:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"no answer within {timeout}s to {line[:200]!r}"
        answer = self.proc.stdout.readline()
        assert answer.endswith(b"\n"), f"truncated answer to {line[:200]!r}: {answer[:200]!r}"
        return answer

    def send(self, request) -> dict:
        line = request if isinstance(request, bytes) else json.dumps(request).encode()
        response = json.loads(self.raw(line))
        assert isinstance(response, dict)
        return response

    def close(self) -> tuple[int, bytes]:
        rest, _ = self.proc.communicate(timeout=20)
        return self.proc.returncode, rest


def valid_actions(response_info: dict) -> list[int]:
    return [a for a, allowed in enumerate(response_info["action_mask"]) if allowed]


def mutated_state(rng: random.Random, state: dict) -> dict:
    """A copy of a valid state with one rule broken (protocol.md §6)."""
    s = copy.deepcopy(state)
    player = s["player"]
    choice = rng.randrange(16)
    if choice == 0:
        player[rng.choice(["row", "col"])] = rng.choice([-1, 6, 100])
    elif choice == 1:
        player[rng.choice(["credits", "energy", "dataSiphons", "score"])] = rng.choice(
            [-1, 1_000_001, 10**12]
        )
    elif choice == 2:
        player["hp"] = rng.choice([-1, 4, 2.5, "3", True])
    elif choice == 3:
        s[rng.choice(["bogus", "Stage", "enemy"])] = 1
    elif choice == 4:
        s["stage"] = rng.choice([0, 9, -3, 1.5])
    elif choice == 5:
        s["enemies"] = [{"type": rng.choice(["dragon", "", "virus "]), "row": 3, "col": 3, "hp": 1}]
    elif choice == 6:
        s["enemies"] = [{"type": "daemon", "row": 3, "col": 3, "hp": rng.choice([0, 4, 9])}]
    elif choice == 7:
        cell = {"row": 2, "col": 2, "type": "data", "points": 3}
        s["blocks"] = [b for b in s["blocks"] if (b["row"], b["col"]) != (2, 2)] + [
            cell,
            dict(cell),
        ]
    elif choice == 8:
        s["exit"] = {"row": rng.choice([1, 2, 3]), "col": rng.choice([1, 2, 3, 4])}
    elif choice == 9:
        snapshot = {"player": dict(player)}
        s["undoHistory"] = [snapshot] * 5
    elif choice == 10:
        s["gameWon"] = True
        s["stage"] = rng.choice([1, 2, 7])
    elif choice == 11:
        s["ownedPrograms"] = rng.choice([[4], [28], [5, 5], ["push"]])
    elif choice == 12:
        s["transmissions"] = [
            {"row": player["row"], "col": player["col"], "turnsRemaining": 1, "enemyType": "virus"}
        ]
    elif choice == 13:
        s["resources"] = [{"row": 1, "col": 1, "credits": 2, "energy": 2}]
    elif choice == 14:
        s["seed"] = rng.choice([-1, 2**32, 1e30])
    else:
        s["blocks"] = [
            {
                "row": 0,
                "col": 0,
                "type": "program",
                "programType": rng.choice(["laser", "push+", 7]),
            }
        ]
    return s


def malformed_line(rng: random.Random, state: dict, mask: list[int]) -> tuple[bytes, str]:
    """One bad request line and the error code it must produce."""
    family = rng.randrange(14)
    if family == 0:  # broken JSON: a truncated valid request
        text = json.dumps({"action": "step", "actionIndex": rng.randrange(28)})
        return text[: rng.randrange(1, len(text) - 1)].encode(), "parse_error"
    if family == 1:  # garbage text and JSON look-alikes
        return rng.choice(
            [
                b"this is not json",
                b"{'action': 'reset'}",
                b'{"action": "reset",}',
                b"[1, 2",
                b"NaN",
                b'{"action" "hello"}',
                b"}{",
                b'"unterminated',
                b'{"a":1}{"b":2}',
                b"tru",
                b"01",
                b'{"action": "step", "actionIndex": +1}',
                b'{"action":"hello"} x',
            ]
        ), "parse_error"
    if family == 2:  # empty and whitespace-only lines
        return rng.choice([b"", b" ", b"\t", b"   \t  ", b"\r"]), "parse_error"
    if family == 3:  # invalid UTF-8 and random bytes
        # 0xFF never occurs in UTF-8, so the line is invalid whatever follows.
        junk = b"\xff" + bytes(rng.randrange(128, 256) for _ in range(rng.randrange(0, 20)))
        return rng.choice([b'{"action": "' + junk + b'"}', junk]), "parse_error"
    if family == 4:  # nesting deeper than the parser allows
        depth = rng.choice([600, 5000, 50_000])
        return b'{"action":"getState","x":' + b"[" * depth + b"]" * depth + b"}", "parse_error"
    if family == 5:  # valid JSON that is not an object
        return rng.choice(
            [b"1", b"null", b"true", b'"reset"', b'[{"action":"reset"}]', b"3.5"]
        ), "invalid_request"
    if family == 6:  # missing or non-string command
        value = rng.choice([None, 1, True, [], {}, ["reset"]])
        request = {} if rng.random() < 0.3 else {"action": value}
        return json.dumps(request).encode(), "invalid_request"
    if family == 7:  # unknown command names
        name = rng.choice(
            ["Reset", "STEP", "stepp", "", " reset", "quit", "exit", "getstate", "setstate"]
        )
        return json.dumps({"action": name}).encode(), "unknown_command"
    if family == 8:  # actionIndex of the wrong type
        value = rng.choice([3.5, "3", True, None, [], {}, -0.5, 1e400])
        text = (
            json.dumps({"action": "step", "actionIndex": value})
            if value != 1e400
            else ('{"action": "step", "actionIndex": 1e400}')
        )
        if rng.random() < 0.2:
            text = json.dumps({"action": "step"})
        return text.encode(), "invalid_request"
    if family == 9:  # out-of-range actions, huge numbers included
        value = rng.choice(
            ["28", "99", "-1", "-28", "1000000", "1e300", "123456789012345678901234567890", "28.0"]
        )
        return ('{"action": "step", "actionIndex": ' + value + "}").encode(), "action_out_of_range"
    if family == 10:  # masked actions
        masked = [a for a in range(28) if a not in mask]
        return json.dumps(
            {"action": "step", "actionIndex": rng.choice(masked)}
        ).encode(), "action_masked"
    if family == 11:  # bad reset seeds
        value = rng.choice(["-1", "4294967296", "1.5", '"7"', "true", "[]", "1e20"])
        return ('{"action": "reset", "seed": ' + value + "}").encode(), "invalid_request"
    if family == 12:  # setState without a state object
        value = rng.choice([None, 5, "state", [], True])
        request = (
            {"action": "setState"} if value is None else {"action": "setState", "state": value}
        )
        return json.dumps(request).encode(), "invalid_request"
    return json.dumps(
        {"action": "setState", "state": mutated_state(rng, state)}
    ).encode(), "invalid_state"


def test_malformed_lines_are_answered_and_lose_nothing(swift_binary):
    rng = random.Random(SEED)
    cli = Cli(swift_binary)
    info = cli.send({"action": "reset", "seed": 123})["info"]
    for _ in range(5):  # a game with some history
        info = cli.send({"action": "step", "actionIndex": rng.choice(valid_actions(info))})["info"]
    mask = valid_actions(info)
    baseline = cli.send({"action": "getState"})
    state = baseline["state"]

    seen_codes: dict[str, int] = {}
    for n in range(BAD_LINES):
        line, code = malformed_line(rng, state, mask)
        response = cli.send(line)
        assert set(response) == {"error"}, f"line {n}: {line[:200]!r} -> {response}"
        assert response["error"]["code"] == code, f"line {n}: {line[:200]!r} -> {response}"
        assert isinstance(response["error"]["message"], str) and response["error"]["message"]
        if code == "invalid_state":
            assert response["error"]["details"]["path"].startswith("state")
        seen_codes[code] = seen_codes.get(code, 0) + 1
        if n % 7 == 0:
            assert cli.send({"action": "getState"}) == baseline, (
                f"line {n} changed the game: {line[:200]!r}"
            )

    assert cli.send({"action": "getState"}) == baseline
    assert set(seen_codes) == {
        "parse_error",
        "invalid_request",
        "unknown_command",
        "action_out_of_range",
        "action_masked",
        "invalid_state",
    }

    # Valid requests still work, and the game continues where it was.
    step = cli.send({"action": "step", "actionIndex": mask[0]})
    assert step["info"]["step_index"] == state["stepIndex"] + 1
    assert cli.send({"action": "hello"})["engineVersion"] == "0.1.0"

    # Play to the end; then steps are episode_over and change nothing.
    info = step["info"]
    for _ in range(20_000):
        if step["done"]:
            break
        step = cli.send({"action": "step", "actionIndex": rng.choice(valid_actions(step["info"]))})
    assert step["done"]
    over = cli.send({"action": "getState"})
    for _ in range(50):
        line, code = malformed_line(rng, state, mask)
        if code in ("action_out_of_range", "action_masked"):
            code = "episode_over"  # the episode check comes first (protocol.md §5.2)
        if code == "episode_over" or rng.random() < 0.5:
            response = cli.send({"action": "step", "actionIndex": rng.randrange(-5, 40)})
            assert response["error"]["code"] == "episode_over"
        else:
            assert cli.send(line)["error"]["code"] == code
    assert cli.send({"action": "getState"}) == over
    assert cli.send({"action": "getValidActions"}) == {"validActions": []}

    returncode, rest = cli.close()
    assert rest == b"", "no output beyond one line per request"
    assert returncode == 0
