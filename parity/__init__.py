"""Parity harness: proves that the JAX engine plays the same game as the Swift engine.

It replays traces (``protocol.md`` §9) through both engines side by side and
diffs every observation value, the action mask, the 15 reward components,
``done`` and the full state after every step; it fuzzes both engines with
random (biased) play, shrinks what diverges, and counts what was exercised.

Entry point: ``python -m parity record|replay|fuzz|coverage|corpus ...``.
"""
