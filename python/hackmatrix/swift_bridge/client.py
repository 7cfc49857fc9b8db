"""Subprocess client for the HackMatrix Swift CLI (JSON lines, ``protocol.md``).

One request line out, one response line back, per call. The client is used
by the Gymnasium env, the parity harness, the viewer and ``play.py``, so it
stays general: every command of ``protocol.md`` §5 has a method, ``request``
sends any JSON object, and ``request_raw`` sends any text line.

Failure modes:

- the engine answers ``{"error": {...}}``: :class:`CliError` (code, message,
  details); the process keeps running and the game is unchanged;
- the process dies or closes stdout: :class:`EngineCrashed`, naming the
  binary, the command and the tail of the engine's stderr;
- no answer within ``timeout`` seconds: :class:`EngineTimeout` (the process
  is killed first).

The child is always reaped (``kill`` + ``wait``) on close, on a timeout or
crash, and when the client is garbage-collected, so no zombie is left.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import select
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any, TextIO

try:  # responses are ~5 KB of JSON; orjson parses them about 3x faster than json
    import orjson

    parse_response: Callable[[bytes | str], Any] = orjson.loads
except ImportError:  # pragma: no cover - orjson comes with the sb3 extra; json is the fallback
    parse_response = json.loads

from hackmatrix.swift_bridge.binary import find_binary

__all__ = ["CliError", "EngineError", "EngineCrashed", "EngineTimeout", "SwiftEngine"]

DEFAULT_TIMEOUT_S = 30.0
STDERR_TAIL_LINES = 200
_COMMAND_PREVIEW_CHARS = 300
_READ_CHUNK = 1 << 16


class CliError(RuntimeError):
    """An error line from the engine (``protocol.md`` §7)."""

    def __init__(
        self, code: str, message: str, details: dict | None = None, command: str | None = None
    ) -> None:
        self.code = code
        self.message = message
        self.details = details
        self.command = command
        text = f"{code}: {message}"
        if details:
            text += f" (details: {json.dumps(details)})"
        super().__init__(text)


class EngineError(RuntimeError):
    """The engine process cannot answer (crashed, hung, or already closed)."""


class EngineCrashed(EngineError):
    """The engine process exited or closed its stdout."""


class EngineTimeout(EngineError):
    """The engine did not answer in time; the process has been killed."""


def _preview(text: str) -> str:
    text = text.rstrip("\n")
    if len(text) <= _COMMAND_PREVIEW_CHARS:
        return text
    return text[:_COMMAND_PREVIEW_CHARS] + f"... ({len(text)} chars)"


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    """A child's stream opened with PIPE (typed as optional, never None then)."""
    if stream is None:
        raise EngineError("the engine process has no pipe to talk through")
    return stream


class _StderrDrain(threading.Thread):
    """Reads the child's stderr until EOF: keeps the last lines, optionally tees to a file.

    Without it a chatty engine (``--debug``) would fill the pipe and block.
    """

    def __init__(self, stream: IO[bytes], log_path: Path | None) -> None:
        super().__init__(name="hackmatrix-stderr", daemon=True)
        self._stream = stream
        self._log_path = log_path
        self._lines: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._lock = threading.Lock()

    def run(self) -> None:
        if self._log_path:
            with open(self._log_path, "w", encoding="utf-8") as log:
                self._collect(log)
        else:
            self._collect(None)

    def _collect(self, log: TextIO | None) -> None:
        # OSError/ValueError: the pipe was closed under us during shutdown
        with contextlib.suppress(OSError, ValueError):
            for raw in iter(self._stream.readline, b""):
                line = raw.decode("utf-8", errors="replace")
                with self._lock:
                    self._lines.append(line.rstrip("\n"))
                if log is not None:
                    log.write(line)
                    log.flush()

    def tail(self, max_lines: int = 30) -> str:
        with self._lock:
            lines = list(self._lines)[-max_lines:]
        return "\n".join(lines)


class SwiftEngine:
    """A running HackMatrix CLI process.

    >>> with SwiftEngine() as engine:
    ...     first = engine.reset(seed=42)
    ...     result = engine.step(first["info"]["action_mask"].index(True))
    """

    def __init__(
        self,
        binary: str | os.PathLike | None = None,
        *,
        timeout: float | None = DEFAULT_TIMEOUT_S,
        log_level: str | None = None,
        extra_args: Iterable[str] = (),
        stderr_log: str | os.PathLike | None = None,
    ) -> None:
        """Start the engine.

        binary: the CLI (default: :func:`hackmatrix.swift_bridge.binary.find_binary`).
        timeout: seconds to wait for each response (None: wait forever).
        log_level: None, "info" or "debug" (engine logs go to stderr).
        stderr_log: a file that receives the engine's whole stderr.
        """
        self.binary = Path(binary) if binary is not None else find_binary()
        self.timeout = timeout
        args = [str(self.binary), "--headless-cli"]
        if log_level is not None:
            if log_level not in ("info", "debug"):
                raise ValueError(f"log_level must be None, 'info' or 'debug', not {log_level!r}")
            args.append(f"--{log_level}")
        args.extend(extra_args)
        self._closed = True
        self._proc: subprocess.Popen | None = None
        self._proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
        )
        self._closed = False
        stdin, stdout = _pipe(self._proc.stdin), _pipe(self._proc.stdout)
        self._stdin_fd = stdin.fileno()
        self._stdout_fd = stdout.fileno()
        os.set_blocking(self._stdin_fd, False)
        os.set_blocking(self._stdout_fd, False)
        self._buffer = bytearray()
        log_path = Path(stderr_log) if stderr_log else None
        self._stderr = _StderrDrain(_pipe(self._proc.stderr), log_path)
        self._stderr.start()

    # ----------------------------------------------------------------- commands

    def hello(self) -> dict:
        return self.request({"action": "hello"})

    def reset(self, seed: int | None = None) -> dict:
        """``{observation, seed, info}``; ``seed`` None lets the engine pick one."""
        payload: dict[str, Any] = {"action": "reset"}
        if seed is not None:
            payload["seed"] = int(seed)
        return self.request(payload)

    def step(self, action: int) -> dict:
        """``{observation, reward, done, info}``; raises :class:`CliError` if rejected."""
        return self.request({"action": "step", "actionIndex": int(action)})

    def set_state(self, state: dict) -> dict:
        return self.request({"action": "setState", "state": state})

    def get_state(self) -> dict:
        """The canonical state object (the ``state`` field of the response)."""
        return self.request({"action": "getState"})["state"]

    def get_valid_actions(self) -> list[int]:
        return self.request({"action": "getValidActions"})["validActions"]

    def get_internal_state(self) -> dict:
        return self.request({"action": "getInternalState"})

    def get_action_space(self) -> dict:
        return self.request({"action": "getActionSpace"})

    def get_observation_space(self) -> dict:
        return self.request({"action": "getObservationSpace"})

    # ------------------------------------------------------------------ transport

    def request(self, payload: dict) -> dict:
        """Send one request object; return the response, or raise :class:`CliError`."""
        line = json.dumps(payload, separators=(",", ":"))
        response = self._round_trip(line)
        error = response.get("error") if isinstance(response, dict) else None
        if error is not None:
            if isinstance(error, dict):
                raise CliError(
                    str(error.get("code", "unknown")),
                    str(error.get("message", "")),
                    error.get("details"),
                    command=_preview(line),
                )
            raise CliError("unknown", str(error), None, command=_preview(line))
        return response

    def request_raw(self, line: str) -> Any:
        """Send one text line as it is (no newline inside).

        Returns the parsed response, error responses included.
        """
        if "\n" in line:
            raise ValueError("a request line must not contain a newline")
        return self._round_trip(line)

    def _round_trip(self, line: str) -> Any:
        if self._closed or self._proc is None:
            raise EngineError(f"the engine {self.binary} is closed; start a new SwiftEngine")
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        self._write_all((line + "\n").encode("utf-8"), deadline, line)
        response = self._read_line(deadline, line)
        try:
            return parse_response(response)
        except ValueError as exc:
            # Requests and responses can no longer be paired up: stop the engine.
            self._terminate()
            answer = _preview(response.decode("utf-8", errors="replace"))
            raise EngineError(
                f"the engine {self.binary} wrote a line that is not JSON in answer to "
                f"{_preview(line)}: {answer}; it was stopped"
            ) from exc

    def _wait_ready(self, fd: int, for_write: bool, deadline: float | None, line: str) -> None:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            self._fail_timeout(line)
        if for_write:
            ready = select.select([], [fd], [], remaining)[1]
        else:
            ready = select.select([fd], [], [], remaining)[0]
        if not ready:
            self._fail_timeout(line)

    def _write_all(self, data: bytes, deadline: float | None, line: str) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._stdin_fd, view)
            except BlockingIOError:
                self._wait_ready(self._stdin_fd, True, deadline, line)
                continue
            except (BrokenPipeError, OSError):
                self._fail_crashed(line, "its stdin is closed")
            view = view[written:]

    def _read_line(self, deadline: float | None, line: str) -> bytes:
        buffer = self._buffer
        searched = 0
        while True:
            newline = buffer.find(b"\n", searched)
            if newline >= 0:
                response = bytes(buffer[:newline])
                del buffer[: newline + 1]
                return response
            searched = len(buffer)
            try:
                chunk = os.read(self._stdout_fd, _READ_CHUNK)
            except BlockingIOError:
                self._wait_ready(self._stdout_fd, False, deadline, line)
                continue
            except OSError:
                chunk = b""
            if not chunk:
                self._fail_crashed(line, "it closed its stdout")
            buffer += chunk

    # ------------------------------------------------------------------ failures

    def _fail_timeout(self, line: str) -> None:
        self._terminate()
        raise EngineTimeout(
            f"the engine {self.binary} did not answer within {self.timeout} s; it was killed. "
            f"Command: {_preview(line)}\n{self._stderr_report()}"
        )

    def _fail_crashed(self, line: str, what: str) -> None:
        status = self._terminate(grace=1.0)
        raise EngineCrashed(
            f"the engine {self.binary} died ({what}; exit status {status}) while handling: "
            f"{_preview(line)}\n{self._stderr_report()}"
        )

    def _stderr_report(self) -> str:
        self._stderr.join(timeout=1.0)  # let it collect the last words of a dead process
        tail = self._stderr.tail()
        return f"stderr tail:\n{tail}" if tail else "stderr: (empty)"

    # ------------------------------------------------------------------ lifecycle

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def closed(self) -> bool:
        return self._closed

    def stderr_tail(self, max_lines: int = 30) -> str:
        return self._stderr.tail(max_lines)

    def _terminate(self, grace: float = 0.0) -> int | None:
        """Make sure the child is gone and reaped; return its exit status."""
        self._closed = True
        proc = self._proc
        if proc is None:
            return None
        with contextlib.suppress(OSError):
            _pipe(proc.stdin).close()
        status = None
        if grace > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                status = proc.wait(timeout=grace)
        if status is None:
            if proc.poll() is None:
                proc.kill()
            status = proc.wait()
        _pipe(proc.stdout).close()
        return status

    def close(self) -> None:
        """End the engine: close its stdin (it exits with 0), kill it if it lingers, reap it."""
        if self._closed:
            return
        self._terminate(grace=1.0)
        self._stderr.join(timeout=1.0)

    def __enter__(self) -> SwiftEngine:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_proc", None) is not None and not getattr(self, "_closed", True):
            with contextlib.suppress(Exception):  # never raise from a finalizer
                self._terminate()
