"""Run identity shared by both trainers: run names, W&B ids, the git commit (training.md §4.5).

Standard library only: the SB3 script imports it without JAX, and the JAX
trainer imports it without PyTorch.
"""

from __future__ import annotations

import datetime
import hashlib
import re
import subprocess
from pathlib import Path


def next_run_name(
    parent: Path,
    suffix: str | None = None,
    today: datetime.date | None = None,
    *,
    prefix: str = "hackmatrix",
    lowercase: bool = False,
    count_files: bool = False,
) -> str:
    """`{prefix}-{mon}{dd}-{yy}-{N}[-{suffix}]`, N one above the highest used today under `parent`.

    `count_files` also counts plain files with today's prefix (the JAX
    trainer's rule; SB3 counts run directories only). `lowercase` lowers the
    whole name, suffix included (the JAX format is all lower case).
    """
    today = today or datetime.date.today()
    stem = f"{prefix}-{today.strftime('%b').lower()}{today.day:02d}-{today.year % 100:02d}-"
    used = [0]
    parent = Path(parent)
    if parent.is_dir():
        for entry in parent.iterdir():
            match = re.fullmatch(re.escape(stem) + r"(\d+)(-.*)?", entry.name)
            if match and (count_files or entry.is_dir()):
                used.append(int(match.group(1)))
    name = f"{stem}{max(used) + 1}"
    if suffix:
        name = f"{name}-{suffix}"
    return name.lower() if lowercase else name


def wandb_run_id(run_name: str) -> str:
    """The W&B run id: the first 8 hex digits of the MD5 of the run name (training.md §3.5)."""
    return hashlib.md5(run_name.encode()).hexdigest()[:8]


def git_commit() -> str | None:
    """The HEAD commit of the checkout this module lives in, or None outside git."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).parent,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None
