"""Saving rendered frames as an animated GIF (Pillow) or a video (imageio)."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

VIDEO_SUFFIXES = (".mp4", ".webm", ".mkv", ".mov", ".avi")


def _check_frames(frames: Sequence[np.ndarray]) -> list[np.ndarray]:
    frames = [np.asarray(f) for f in frames]
    if not frames:
        raise ValueError("no frames to save")
    shape = frames[0].shape
    for i, f in enumerate(frames):
        if f.ndim != 3 or f.shape[2] != 3 or f.dtype != np.uint8:
            raise ValueError(
                f"frame {i}: expected an (H, W, 3) uint8 array, got {f.shape} {f.dtype}"
            )
        if f.shape != shape:
            raise ValueError(
                f"frame {i} is {f.shape[:2]}, frame 0 is {shape[:2]}: all frames need one size"
            )
    return frames


def _check_fps(fps: float) -> float:
    if not fps > 0:
        raise ValueError(f"fps must be positive, got {fps}")
    return float(fps)


def save_gif(frames: Sequence[np.ndarray], path: str | Path, fps: float = 4.0) -> Path:
    """Write an animated GIF that loops forever.

    The GIF writer merges a frame identical to the one before it into a
    longer frame; callers that need one GIF frame per step make frames
    differ (the viewers put the step number in the title).
    """
    frames = _check_frames(frames)
    fps = _check_fps(fps)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    images = [Image.fromarray(f, mode="RGB") for f in frames]
    duration = max(
        20, int(round(1000.0 / fps))
    )  # GIF delays are in 10 ms units; 20 ms is the usual floor
    tmp = path.with_name(path.name + ".tmp")
    images[0].save(
        tmp, format="GIF", save_all=True, append_images=images[1:], duration=duration, loop=0
    )
    tmp.replace(path)
    return path


def video_backend_available() -> bool:
    """Whether imageio can write video here (it needs imageio-ffmpeg or PyAV)."""
    if importlib.util.find_spec("imageio") is None:
        return False
    return any(importlib.util.find_spec(m) is not None for m in ("imageio_ffmpeg", "av"))


def save_video(frames: Sequence[np.ndarray], path: str | Path, fps: float = 4.0) -> Path:
    """Write a video (mp4 and friends) with imageio's ffmpeg backend."""
    frames = _check_frames(frames)
    fps = _check_fps(fps)
    if not video_backend_available():
        raise RuntimeError(
            f"cannot write video {path}: no ffmpeg backend for imageio is installed "
            "(pip install 'imageio[ffmpeg]' or 'imageio[pyav]'); a .gif path works without one"
        )
    import imageio.v3 as iio

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # H.264 works in 16x16 blocks; pad (repeating the edge) rather than let the writer rescale.
    h, w = frames[0].shape[:2]
    pad_h, pad_w = -h % 16, -w % 16
    if pad_h or pad_w:
        frames = [np.pad(f, ((0, pad_h), (0, pad_w), (0, 0)), mode="edge") for f in frames]
    try:
        iio.imwrite(path, np.stack(frames), fps=fps, extension=path.suffix)
    except Exception as exc:
        raise RuntimeError(
            f"could not write video {path}: {exc}. Video needs an ffmpeg backend "
            "(pip install 'imageio[ffmpeg]' or 'imageio[pyav]'); a .gif path works without one"
        ) from exc
    return path


def save_recording(frames: Sequence[np.ndarray], path: str | Path, fps: float = 4.0) -> Path:
    """Pick the format from the file suffix: .gif, or a video suffix."""
    suffix = Path(path).suffix.lower()
    if suffix == ".gif":
        return save_gif(frames, path, fps)
    if suffix in VIDEO_SUFFIXES:
        return save_video(frames, path, fps)
    raise ValueError(f"cannot record to {path}: use a .gif or one of {', '.join(VIDEO_SUFFIXES)}")
