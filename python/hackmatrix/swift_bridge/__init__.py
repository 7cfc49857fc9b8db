"""The Python side of the Swift reference engine.

- ``binary``: finds the Swift CLI (``$HACKMATRIX_BINARY``, else ``./swift-build``'s output);
- ``client``: ``SwiftEngine``, one CLI subprocess spoken to in JSON lines (``protocol.md``);
- ``observation``: the reference encoder, JSON observation -> f32 arrays (``observation.md`` §9);
- ``gym_env``: the Gymnasium env ``HackMatrix-v0`` on top of the client.

Nothing is imported here, so ``import hackmatrix.swift_bridge.binary`` needs no gymnasium.
"""
