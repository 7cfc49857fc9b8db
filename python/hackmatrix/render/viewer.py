"""A window that shows rendered frames (pygame), or the terminal when there is none.

`Viewer(mode="auto")` opens a pygame window when a display can be used and
otherwise prints `render_text` to a stream. A display is usable when
SDL_VIDEODRIVER is set (``dummy`` gives a headless window whose frames can be
read back with `capture`), on macOS and Windows, and on Linux/BSD when DISPLAY
or WAYLAND_DISPLAY is set. pygame is imported only when a window opens.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from typing import Any, TextIO

import numpy as np

from .image import render_rgb
from .text import render_text

MODES = ("auto", "window", "text", "none")


def display_available(
    environ: Mapping[str, str] | None = None, platform: str | None = None
) -> bool:
    """Whether a pygame window can be expected to open here."""
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if environ.get("SDL_VIDEODRIVER"):
        return True
    if platform == "darwin" or platform.startswith("win"):
        return True
    return bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))


def _import_pygame():
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    return pygame


class Viewer:
    """Shows game states in a window, or as text.

    mode: "auto" (window if `display_available()`, else text), "window",
    "text", or "none" (render nothing, e.g. when only recording).
    """

    def __init__(
        self,
        title: str = "HackMatrix",
        *,
        mode: str = "auto",
        stream: TextIO | None = None,
        color: bool | None = None,
        scale: float = 1.0,
    ):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.title = title
        self.scale = scale
        self.stream = stream if stream is not None else sys.stdout
        is_tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.color = is_tty if color is None else color
        self._clear_screen = is_tty
        self._pygame: Any = None  # the pygame module, in window mode
        self._screen: Any = None  # the pygame display surface, once a frame is shown
        self._closed = False
        self._pending_keys: list[str] = []  # read from pygame but not yet handed out by wait_key
        self.fallback_reason: str | None = None

        requested = mode
        if mode == "auto":
            mode = "window" if display_available() else "text"
            if mode == "text":
                self.fallback_reason = (
                    "no display (DISPLAY/WAYLAND_DISPLAY unset and SDL_VIDEODRIVER unset)"
                )
        if mode == "window":
            try:
                self._pygame = _import_pygame()
                self._pygame.display.init()
            except Exception as exc:  # no pygame, or SDL cannot open a video driver
                if requested == "window":
                    raise RuntimeError(f"cannot open a pygame window: {exc}") from exc
                self._pygame = None
                self.fallback_reason = f"cannot open a pygame window ({exc})"
                mode = "text"
        self.mode = mode

    # ----------------------------------------------------------------- showing

    def show(self, state: dict, **render_kwargs) -> np.ndarray | None:
        """Show a state; returns the RGB frame when one was drawn (window mode)."""
        if self._closed:
            raise RuntimeError("the viewer is closed")
        if self.mode == "window":
            frame = render_rgb(state, scale=self.scale, **render_kwargs)
            self.show_frame(frame)
            return frame
        if self.mode == "text":
            text_kwargs = {
                k: v
                for k, v in render_kwargs.items()
                if k in ("last_action", "reward_components", "reward", "mask", "reveal")
            }
            self.show_text(
                render_text(state, color=self.color, **text_kwargs),
                header=render_kwargs.get("title"),
                footer=render_kwargs.get("footer", ()),
            )
        return None

    def show_frame(self, frame: np.ndarray) -> None:
        """Put an (H, W, 3) uint8 frame in the window (window mode only)."""
        if self.mode != "window":
            raise RuntimeError(f"show_frame needs a window; this viewer is in {self.mode!r} mode")
        pg = self._pygame
        frame = np.ascontiguousarray(frame, dtype=np.uint8)
        h, w = frame.shape[:2]
        if self._screen is None or self._screen.get_size() != (w, h):
            self._screen = pg.display.set_mode((w, h))
            pg.display.set_caption(self.title)
        surface = pg.image.frombuffer(frame.tobytes(), (w, h), "RGB")
        self._screen.blit(surface, (0, 0))
        pg.display.flip()
        pg.event.pump()

    def show_text(self, text: str, *, header: str | None = None, footer=()) -> None:
        if self.mode != "text":
            return
        out = []
        if self._clear_screen:
            out.append("\x1b[H\x1b[2J")
        else:
            out.append("\n" + "=" * 60 + "\n")
        if header:
            out.append(header + "\n")
        out.append(text + "\n")
        for line in footer:
            out.append(line + "\n")
        self.stream.write("".join(out))
        self.stream.flush()

    def message(self, text: str) -> None:
        """A line for the person watching: the terminal in text mode, stdout otherwise."""
        if self.mode == "none":
            return
        self.stream.write(text + "\n")
        self.stream.flush()

    def capture(self) -> np.ndarray:
        """The window's current contents as an (H, W, 3) uint8 array."""
        if self.mode != "window" or self._screen is None:
            raise RuntimeError("nothing to capture: no frame has been shown in a window")
        pixels = self._pygame.surfarray.array3d(self._screen)  # (W, H, 3)
        return np.ascontiguousarray(pixels.transpose(1, 0, 2), dtype=np.uint8)

    # ------------------------------------------------------------------ input

    def poll_keys(self) -> list[str]:
        """Keys pressed since the last call, by pygame key name ("up", "s", "escape").

        Closing the window yields "quit". Text and none modes return [].
        """
        if self.mode != "window" or self._pygame is None:
            return []
        pg = self._pygame
        keys, self._pending_keys = self._pending_keys, []
        for event in pg.event.get():
            if event.type == pg.QUIT:
                keys.append("quit")
            elif event.type == pg.KEYDOWN:
                name = event.unicode if event.unicode in ("?", "+") else pg.key.name(event.key)
                keys.append(name)
        return keys

    def wait_key(self, timeout: float | None = None, poll_interval: float = 0.02) -> str | None:
        """Block until a key is pressed (window mode); None on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            keys = self.poll_keys()
            if keys:
                self._pending_keys = keys[1:] + self._pending_keys
                return keys[0]
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(poll_interval)

    def sleep(self, seconds: float) -> bool:
        """Wait while keeping the window responsive; False if the window was closed."""
        end = time.monotonic() + max(0.0, seconds)
        while True:
            keys = self.poll_keys()
            if "quit" in keys:
                return False
            self._pending_keys.extend(keys)
            remaining = end - time.monotonic()
            if remaining <= 0:
                return True
            time.sleep(min(0.02, remaining))

    # ------------------------------------------------------------------ closing

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._pygame is not None:
            self._pygame.display.quit()
            self._screen = None

    def __enter__(self) -> Viewer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
