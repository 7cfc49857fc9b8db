"""Font loading: DejaVu when the system has it, Pillow's own font otherwise."""

from __future__ import annotations

from functools import lru_cache

from PIL import ImageFont

# Searched by name in the system font folders (Pillow does the search), then by path.
_CANDIDATES = {
    False: (
        "DejaVuSans.ttf",
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/System/Library/Fonts/Supplemental/Arial.ttf",
        "Arial.ttf",
    ),
    True: (
        "DejaVuSans-Bold.ttf",
        "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
        "/System/Library/Fonts/Supplemental/Arial Bold.ttf",
        "Arial Bold.ttf",
    ),
}


@lru_cache(maxsize=64)
def font(size: int, bold: bool = False) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    size = max(6, int(round(size)))
    for name in _CANDIDATES[bold]:
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    try:  # Pillow >= 10.1 scales its built-in font when FreeType is available
        return ImageFont.load_default(size=size)
    except TypeError:
        return ImageFont.load_default()
