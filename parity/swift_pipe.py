"""A pipelined driver for the Swift CLI used by the fuzzer: it writes a whole
episode's requests at once (from a writer thread, so neither pipe can fill up
and stall) and reads the answers in order. One process per worker; no waiting
for a round trip per step."""

from __future__ import annotations

import json
import subprocess
import threading

from hackmatrix.swift_bridge.client import parse_response


class SwiftPipe:
    def __init__(self, binary: str) -> None:
        self.binary = str(binary)
        self._proc = subprocess.Popen(
            [self.binary, "--headless-cli"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=1 << 20,
        )

    def exchange(self, requests: list[dict]) -> list[dict]:
        payload = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in requests).encode()
        failure: list[BaseException] = []

        def write() -> None:
            try:
                self._proc.stdin.write(payload)
                self._proc.stdin.flush()
            except BaseException as error:  # reported below, after reading what came back
                failure.append(error)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        responses = []
        for _ in requests:
            line = self._proc.stdout.readline()
            if not line:
                writer.join()
                raise RuntimeError(
                    f"the Swift CLI {self.binary} stopped answering "
                    f"(exit status {self._proc.poll()}){': ' + str(failure[0]) if failure else ''}"
                )
            responses.append(parse_response(line))
        writer.join()
        return responses

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
