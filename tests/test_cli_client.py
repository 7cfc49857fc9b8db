"""SwiftEngine, the JSON-lines client of the CLI.

Failure handling (crash, hang, garbage, chatty stderr) is exercised against a
small scripted engine so every path can be forced; the protocol itself is
exercised against the real Swift binary (marked ``swift``).
"""

import os
import signal
import sys
import textwrap
import time

import pytest

from hackmatrix.swift_bridge.client import (
    CliError,
    EngineCrashed,
    EngineError,
    EngineTimeout,
    SwiftEngine,
)

SCRIPTED_ENGINE = textwrap.dedent(
    """\
    import json, sys, time
    sys.stderr.write("scripted engine up\\n"); sys.stderr.flush()
    for line in sys.stdin:
        request = json.loads(line)
        command = request.get("action")
        if command == "crash":
            sys.stderr.write("fatal: simulated crash\\n"); sys.stderr.flush()
            sys.exit(3)
        elif command == "hang":
            time.sleep(120)
        elif command == "error":
            error = {"code": "no_game", "message": "no game yet", "details": {"n": 1}}
            print(json.dumps({"error": error}), flush=True)
        elif command == "legacy":
            print(json.dumps({"error": "old style text"}), flush=True)
        elif command == "garbage":
            print("this is not json", flush=True)
        elif command == "chatty":
            for i in range(5000):
                sys.stderr.write("log line %d %s\\n" % (i, "x" * 80))
            print(json.dumps({"ok": True}), flush=True)
        else:
            print(json.dumps({"echo": request}), flush=True)
    """
)


def reaped(pid: int) -> bool:
    """True when the child no longer exists as a process or zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True  # already waited for: not a zombie
    return False


@pytest.fixture
def scripted_exe(tmp_path):
    script = tmp_path / "engine.py"
    script.write_text(SCRIPTED_ENGINE)
    exe = tmp_path / "fake-hackmatrix"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    exe.chmod(0o755)
    return exe


@pytest.fixture
def scripted(scripted_exe):
    engine = SwiftEngine(scripted_exe, timeout=5.0)
    yield engine
    engine.close()


def test_round_trips_keep_order_and_large_payloads(scripted):
    big = "y" * 300_000
    for i in range(20):
        assert scripted.request({"action": "anything", "i": i}) == {
            "echo": {"action": "anything", "i": i}
        }
    assert scripted.request({"action": "big", "data": big})["echo"]["data"] == big


def test_error_response_raises_typed_cli_error(scripted):
    with pytest.raises(CliError) as info:
        scripted.request({"action": "error"})
    assert (info.value.code, info.value.message, info.value.details) == (
        "no_game",
        "no game yet",
        {"n": 1},
    )
    assert scripted.request({"action": "still-alive"})["echo"]["action"] == "still-alive"


def test_legacy_string_error_is_still_a_cli_error(scripted):
    with pytest.raises(CliError, match="old style text"):
        scripted.request({"action": "legacy"})


def test_non_json_response_is_reported_and_stops_the_engine(scripted):
    pid = scripted.pid
    with pytest.raises(EngineError, match="not JSON"):
        scripted.request({"action": "garbage"})
    assert scripted.closed and reaped(pid)


def test_chatty_stderr_never_blocks_and_is_kept_bounded(scripted):
    assert scripted.request({"action": "chatty"}) == {"ok": True}
    time.sleep(0.2)
    assert "log line 4999" in scripted.stderr_tail(5)


def test_crash_names_binary_command_and_stderr_and_reaps(scripted):
    pid = scripted.pid
    with pytest.raises(EngineCrashed) as info:
        scripted.request({"action": "crash"})
    message = str(info.value)
    assert str(scripted.binary) in message
    assert '"action":"crash"' in message
    assert "fatal: simulated crash" in message
    assert "exit status 3" in message
    assert reaped(pid)
    with pytest.raises(EngineError, match="closed"):
        scripted.request({"action": "anything"})


def test_killed_process_is_detected_and_reaped(scripted):
    pid = scripted.pid
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(EngineCrashed, match="died"):
        scripted.request({"action": "after-kill"})
    assert reaped(pid)


def test_hung_process_times_out_and_is_killed(scripted):
    scripted.timeout = 0.5
    pid = scripted.pid
    started = time.monotonic()
    with pytest.raises(EngineTimeout, match="did not answer within 0.5 s"):
        scripted.request({"action": "hang"})
    assert time.monotonic() - started < 5
    assert reaped(pid)


def test_close_and_garbage_collection_reap_the_child(scripted):
    pid = scripted.pid
    scripted.close()
    assert reaped(pid) and scripted.closed
    scripted.close()  # idempotent

    exe = scripted.binary
    orphan = SwiftEngine(exe, timeout=5.0)
    orphan_pid = orphan.pid
    del orphan
    assert reaped(orphan_pid)


def test_stderr_log_file_receives_the_engine_log(tmp_path, scripted_exe):
    log = tmp_path / "engine.log"
    with SwiftEngine(scripted_exe, stderr_log=log, timeout=5.0) as engine:
        engine.request({"action": "ping"})
    assert "scripted engine up" in log.read_text()


def test_unknown_log_level_is_rejected():
    with pytest.raises(ValueError, match="log_level"):
        SwiftEngine(sys.executable, log_level="verbose")


# ----------------------------------------------------------------- real engine


@pytest.fixture
def engine(swift_binary):
    with SwiftEngine(swift_binary, timeout=10.0) as engine:
        yield engine


@pytest.mark.swift
def test_hello_describes_the_protocol(engine):
    hello = engine.hello()
    assert hello["protocol"] == "hackmatrix-cli"
    assert hello["protocolVersion"].split(".")[0] == "2"
    assert hello["actionCount"] == 28
    assert hello["observationShapes"]["flat"] == [1545]
    assert len(hello["rewardComponents"]) == 15


@pytest.mark.swift
def test_protocol_errors_are_typed_and_harmless(engine):
    with pytest.raises(CliError) as info:
        engine.step(0)
    assert info.value.code == "no_game"
    with pytest.raises(CliError) as info:
        engine.request({"action": "fly"})
    assert info.value.code == "unknown_command"
    assert engine.request_raw("this is not json")["error"]["code"] == "parse_error"
    assert engine.get_valid_actions() == []
    assert engine.hello()["actionCount"] == 28


@pytest.mark.swift
def test_reset_step_and_state_round_trip(engine):
    first = engine.reset(seed=7)
    assert first["seed"] == 7 and first["info"]["step_index"] == 0
    mask = first["info"]["action_mask"]
    assert len(mask) == 28 and any(mask)
    assert engine.get_valid_actions() == [i for i, ok in enumerate(mask) if ok]
    result = engine.step(mask.index(True))
    assert set(result) >= {"observation", "reward", "done", "info"}
    assert len(result["info"]["reward_components"]) == 15
    state = engine.get_state()
    again = engine.set_state(state)
    assert again["observation"] == result["observation"]
    with pytest.raises(CliError) as info:
        engine.step(99)
    assert info.value.code == "action_out_of_range"


@pytest.mark.swift
def test_killing_the_real_engine_gives_a_clear_error(swift_binary):
    engine = SwiftEngine(swift_binary, timeout=10.0)
    pid = engine.pid
    engine.hello()
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(EngineCrashed) as info:
        engine.hello()
    assert str(swift_binary) in str(info.value)
    assert reaped(pid)
