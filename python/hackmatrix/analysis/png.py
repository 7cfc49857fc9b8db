"""The behaviour evaluation's figure (`--png`): four panels, one bar per result."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..names import PROGRAM_NAMES
from .evaluation import Result
from .facts import ENDS


def write_png(results: list[Result], path: Path) -> Path:
    """Four panels, one bar per result in each group.

    The panels: final stage, how games ended, programs, siphons.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(15, 9))
    width = 0.8 / len(results)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]

    def bars(ax, groups, values_of, title, ylabel, rotate=False):
        x = np.arange(len(groups))
        for i, r in enumerate(results):
            ax.bar(
                x + (i - (len(results) - 1) / 2) * width,
                values_of(r.summary),
                width,
                label=r.name,
                color=colours[i % len(colours)],
            )
        ax.set_xticks(x, groups, rotation=60 if rotate else 0, ha="right" if rotate else "center")
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)

    stages = list(results[0].summary["final_stage_histogram"])
    bars(
        axes[0, 0],
        stages,
        lambda s: [s["final_stage_histogram"][k] / s["episodes"] for k in stages],
        "Final stage",
        "share of games",
    )
    axes[0, 0].set_xlabel("stage reached when the game ended")
    bars(
        axes[0, 1],
        [e.replace("died_", "died: ").replace("_", " ") for e in ENDS],
        lambda s: [s["ends"][e] / s["episodes"] for e in ENDS],
        "How games ended",
        "share of games",
    )
    bars(
        axes[1, 0],
        list(PROGRAM_NAMES),
        lambda s: [s["program_uses_per_episode"][p] for p in PROGRAM_NAMES],
        "Programs run",
        "uses per game",
        rotate=True,
    )
    siphon_rows = [
        ("siphons\n/ game", "siphons_per_episode"),
        ("games with\na siphon", "siphon_use_rate"),
        ("suboptimal\nshare", "siphon_suboptimal_share"),
        ("empty\nshare", "siphon_empty_share"),
        ("programs gained\n/ game", "siphon_programs_per_episode"),
    ]
    bars(
        axes[1, 1],
        [name for name, _ in siphon_rows],
        lambda s: [s[key] or 0.0 for _, key in siphon_rows],
        "Siphons",
        "value",
    )
    axes[0, 0].legend(fontsize=9)
    n = results[0].summary["episodes"]
    fig.suptitle(f"Behaviour over {n:,} games (canonical start)")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
