"""Rendering of HackMatrix states: images, terminal text, recordings, a viewer.

Everything here draws from a state dict in the `getState` schema
(protocol.md §6), which both engines produce, and applies the observation's
visibility rules first (see `scene`). Importing this package needs only numpy
and Pillow; pygame is imported by `hackmatrix.render.viewer` when a window is
actually opened.
"""

from hackmatrix.names import ACTION_NAMES, PROGRAM_NAMES, REWARD_COMPONENT_NAMES, action_name

from .image import PALETTE, Layout, render_rgb
from .recording import save_gif, save_recording, save_video
from .scene import Scene, build_scene
from .text import render_text

__all__ = [
    "ACTION_NAMES",
    "PALETTE",
    "PROGRAM_NAMES",
    "REWARD_COMPONENT_NAMES",
    "Layout",
    "Scene",
    "action_name",
    "build_scene",
    "render_rgb",
    "render_text",
    "save_gif",
    "save_recording",
    "save_video",
]
