"""PNG dashboards from runs' metrics.jsonl, no W&B needed (docs/training-guide.md §9).

    python -m hackmatrix.analysis.plot RUN_DIR [RUN_DIR ...] [-o out.png]

One figure: return, length, stage, the PPO health metrics with their healthy
bands shaded (the thresholds of health.py), siphon and program use beside
how often they were valid, the reward components, losses, `eval/*` in two
panels (progress; siphons and programs) and throughput. Several runs are
overlaid, one colour per run. Health warnings are drawn as dotted vertical
lines on the panel of their metric.
matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..purejaxrl import health
from ..purejaxrl.metrics import read_metrics_file

LINESTYLES = ("-", "--", ":", "-.")
GOOD, BAD, WARN = "#2ca02c", "#d62728", "#ff7f0e"


class PlotError(Exception):
    """A run directory that cannot be plotted, with the reason."""


@dataclass
class Run:
    name: str
    updates: np.ndarray
    steps: np.ndarray  # env steps at each update (x axis)
    series: dict[str, np.ndarray]  # key -> values per update, NaN where absent
    warnings: list[dict] = field(default_factory=list)

    def get(self, key: str) -> np.ndarray | None:
        values = self.series.get(key)
        return None if values is None or np.all(np.isnan(values)) else values


def load_run(run_dir: Path, name: str | None = None) -> Run:
    """Read a run's metrics.jsonl. Records of the same update (a chunk and an
    evaluation, or a chunk logged again after a rewind) merge, later ones winning."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise PlotError(f"{run_dir}: not a directory")
    path = run_dir / "metrics.jsonl"
    if not path.is_file():
        raise PlotError(
            f"{run_dir}: no metrics.jsonl here (expected a run directory "
            f"such as checkpoints/<run name>/)"
        )
    by_update: dict[int, dict] = {}
    warnings = []
    for record in read_metrics_file(path):
        if "update" not in record:
            continue
        warnings.extend(record.get("health/warnings", []))
        by_update.setdefault(int(record["update"]), {}).update(record)
    if not any("train/timesteps" in r for r in by_update.values()):
        raise PlotError(f"{path}: no training chunk recorded yet")
    updates = np.array(sorted(by_update), dtype=np.int64)
    records = [by_update[u] for u in updates]
    keys = sorted(
        {
            k
            for r in records
            for k, v in r.items()
            if k not in ("update", "health/warnings") and _is_number(v)
        }
    )
    series = {k: np.array([_float(r.get(k)) for r in records]) for k in keys}
    steps = series["train/timesteps"]
    known = ~np.isnan(steps)
    # Evaluation-only records carry no step count: place them by their update.
    steps = (
        np.interp(updates, updates[known], steps[known])
        if known.sum() > 1
        else updates * (steps[known][0] / updates[known][0])
    )
    return Run(name or run_dir.name, updates, steps, series, warnings)


def _is_number(value) -> bool:
    return value is None or isinstance(value, (int, float))


def _float(value) -> float:
    return math.nan if value is None or not isinstance(value, (int, float)) else float(value)


# ------------------------------------------------------------------ panels
def _lines(ax, runs, colors, key, **style):
    drawn = False
    for run, color in zip(runs, colors):
        values = run.get(key)
        if values is None:
            continue
        ok = ~np.isnan(values)
        ax.plot(run.steps[ok], values[ok], color=color, **style)
        drawn = True
    return drawn


def _band(ax, low, high, color, label):
    ax.axhspan(low, high, color=color, alpha=0.12, lw=0, label=label)


def _warnings(ax, runs, colors, metric):
    for run, color in zip(runs, colors):
        for warning in run.warnings:
            if warning.get("metric") == metric:
                x = np.interp(warning["update"], run.updates, run.steps)
                ax.axvline(x, color=color, ls=":", lw=1.5, alpha=0.9)


def _empty(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")


def _health_panel(ax, runs, colors, key, title, bands, ylim=None):
    for low, high, color, label in bands:
        _band(ax, low, high, color, label)
    if not _lines(ax, runs, colors, key, lw=1.5):
        _empty(ax, f"no {key}")
    _warnings(ax, runs, colors, key)
    ax.set_title(title)
    if ylim is not None:
        top = max([ylim[1]] + [np.nanmax(r.get(key)) * 1.1 for r in runs if r.get(key) is not None])
        ax.set_ylim(ylim[0], top)
    ax.legend(loc="upper right", fontsize=7)


def _action_panel(ax, runs, colors, action):
    taken = _lines(ax, runs, colors, f"actions/{action}_frac", lw=1.5)
    _lines(ax, runs, colors, f"actions/{action}_valid_frac", lw=1.2, ls="--", alpha=0.7)
    _warnings(ax, runs, colors, f"actions/{action}_frac")
    _warnings(ax, runs, colors, f"actions/{action}_valid_frac")  # siphon_hoarding
    positive = any(
        np.nanmax(run.series.get(k, [0])) > 0
        for run in runs
        for k in (f"actions/{action}_frac", f"actions/{action}_valid_frac")
    )
    if not taken:
        _empty(ax, f"no actions/{action}_frac")
    elif not positive:
        _empty(ax, "never valid, never taken")
    else:
        # Log scale: the failure mode is a slide from ~1e-2 to ~1e-4.
        ax.set_yscale("log")
        ax.set_ylim(bottom=1e-5)
        ax.plot([], [], color="0.3", label="taken (share of steps)")
        ax.plot([], [], color="0.3", ls="--", label="valid (share of steps)")
        if action == "siphon":
            ax.axhline(health.HOARD_VALID_ABOVE, color=WARN, ls=":", lw=1.0)
            ax.plot([], [], color=WARN, ls=":", label="hoarding if valid above, use < 25%")
        ax.legend(loc="lower left", fontsize=7)
    ax.set_title(f"{action.capitalize()}: taken vs valid")


def _multi_key_panel(ax, runs, prefix, title, skip=()):
    """Many keys of one prefix: a colour per key, a line style per run."""
    keys = sorted(
        {
            k
            for run in runs
            for k in run.series
            if k.startswith(prefix)
            and k not in skip
            and run.get(k) is not None
            and np.nanmax(np.abs(run.get(k))) > 0
        }
    )
    if not keys:
        _empty(ax, f"no {prefix}* metrics")
        ax.set_title(title)
        return
    cmap = _colormap(len(keys))
    for i, key in enumerate(keys):
        label = key[len(prefix) :]
        for j, run in enumerate(runs):
            values = run.get(key)
            if values is None:
                continue
            ok = ~np.isnan(values)
            ax.plot(
                run.steps[ok],
                values[ok],
                color=cmap[i],
                ls=LINESTYLES[j % len(LINESTYLES)],
                lw=1.3,
                marker="o" if ok.sum() < 3 else None,
                ms=3,
                label=label,
            )
            label = None  # one legend entry per key
    ax.legend(loc="best", fontsize=6.5, ncol=2, framealpha=0.6)
    ax.set_title(title + (" (line style = run)" if len(runs) > 1 else ""))


def _colormap(n):
    import matplotlib

    cmap = matplotlib.colormaps["tab20" if n > 10 else "tab10"]
    return [cmap(i % cmap.N) for i in range(n)]


def draw_dashboard(runs: Sequence[Run], out: Path) -> Path:
    try:
        import matplotlib
    except ImportError as error:
        raise PlotError("plotting needs matplotlib: pip install 'hackmatrix[viz]'") from error
    matplotlib.use("Agg")  # files only; never open a window
    import matplotlib.pyplot as plt

    colors = _colormap(len(runs))
    fig = plt.figure(figsize=(19, 21))
    grid = fig.add_gridspec(5, 3, height_ratios=(1, 1, 1, 1, 0.7))
    ret, length, stage, ent, kl, clip, siphon, program, rewards, progress, uses, losses = (
        fig.add_subplot(grid[row, col]) for row in range(4) for col in range(3)
    )
    speed = fig.add_subplot(grid[4, :])  # one wide panel: throughput needs no detail

    _progress_panels(ret, length, stage, runs, colors)
    _health_panels(ent, kl, clip, runs, colors)
    _action_panel(siphon, runs, colors, "siphon")
    _action_panel(program, runs, colors, "program")
    _multi_key_panel(rewards, runs, "reward/", "Reward components (mean per step, non-zero)")
    _eval_and_loss_panels(progress, uses, losses, runs)
    if not _lines(speed, runs, colors, "train/steps_per_second", lw=1.5, marker="."):
        _empty(speed, "no train/steps_per_second")
    speed.set_title("Env steps per second (first chunk includes compilation)")
    _finish(fig, plt, runs, colors)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=80)
    plt.close(fig)
    return out


def _progress_panels(ret, length, stage, runs: Sequence[Run], colors) -> None:
    """Return and length (with their health warnings), and the stage reached."""
    for ax, key, title in (
        (ret, "train/mean_episode_return", "Mean episode return"),
        (length, "train/mean_episode_length", "Mean episode length"),
    ):
        if not _lines(ax, runs, colors, key, lw=1.5):
            _empty(ax, f"no {key}")
        _warnings(ax, runs, colors, key)
        ax.set_title(title)
    _lines(stage, runs, colors, "stats/mean_final_stage", lw=1.5)
    _lines(stage, runs, colors, "stats/highest_stage", lw=1.0, ls="--", alpha=0.7)
    stage.plot([], [], color="0.3", label="mean final stage (finished episodes)")
    stage.plot([], [], color="0.3", ls="--", label="highest stage reached")
    stage.legend(loc="upper left", fontsize=7)
    stage.set_title("Stage")


def _health_panels(ent, kl, clip, runs: Sequence[Run], colors) -> None:
    """Entropy, KL and clip fraction over the bands of health.py."""
    _health_panel(
        ent,
        runs,
        colors,
        "train/entropy",
        "Entropy (masked)",
        [
            (0, health.ENTROPY_COLLAPSE_BELOW, BAD, f"collapse < {health.ENTROPY_COLLAPSE_BELOW}"),
            (health.ENTROPY_RECOVERED_ABOVE, health.ENTROPY_HIGH_ABOVE, GOOD, "healthy"),
            (
                health.ENTROPY_HIGH_ABOVE,
                3.4,
                WARN,
                f"too high if it stays > {health.ENTROPY_HIGH_ABOVE}",
            ),
        ],
        ylim=(0, 1.5),
    )
    _health_panel(
        kl,
        runs,
        colors,
        "train/approx_kl",
        "Approx KL",
        [
            (*health.KL_HEALTHY, GOOD, f"healthy {health.KL_HEALTHY[0]}-{health.KL_HEALTHY[1]}"),
            (health.KL_PROBLEM_ABOVE, 1.0, BAD, f"problem > {health.KL_PROBLEM_ABOVE}"),
        ],
        ylim=(0, 0.1),
    )
    _health_panel(
        clip,
        runs,
        colors,
        "train/clip_frac",
        "Clip fraction",
        [
            (0, health.CLIP_HEALTHY_BELOW, GOOD, f"healthy < {health.CLIP_HEALTHY_BELOW}"),
            (health.CLIP_PROBLEM_ABOVE, 1.0, BAD, f"problem > {health.CLIP_PROBLEM_ABOVE}"),
        ],
        ylim=(0, 0.4),
    )


def _eval_and_loss_panels(progress, uses, losses, runs: Sequence[Run]) -> None:
    """Two behaviour panels: how far the games go, and what the agent does with siphons and
    programs. Counts, timings and lengths sit on other scales and would flatten both. Then
    the losses alone: other train/* keys (schedules, switches, bonuses) have their own
    scales."""
    eval_keys = {k for run in runs for k in run.series if k.startswith("eval/")}
    use_keys = {k for k in eval_keys if k.startswith(("eval/siphon", "eval/program"))}
    not_shown = {"eval/num_episodes", "eval/seconds", "eval/mean_episode_length"}
    _multi_key_panel(
        progress,
        runs,
        "eval/",
        "Behaviour evaluation: progress (eval/*)",
        skip=not_shown | use_keys,
    )
    _multi_key_panel(
        uses,
        runs,
        "eval/",
        "Behaviour evaluation: siphons and programs (eval/*)",
        skip=not_shown | (eval_keys - use_keys),
    )
    not_losses = {
        k
        for run in runs
        for k in run.series
        if k.startswith("train/") and (not k.endswith("_loss") or k == "train/ent_loss")
    }
    _multi_key_panel(losses, runs, "train/", "Losses", skip=not_losses)


def _finish(fig, plt, runs: Sequence[Run], colors) -> None:
    """Axes labels and grids, the title, and one legend entry per run over the panels."""
    for ax in fig.axes:
        ax.grid(alpha=0.3)
        ax.set_xlabel("env steps")
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 4))
    handles = [plt.Line2D([], [], color=c, lw=3) for c in colors]
    fig.suptitle(
        "HackMatrix training dashboard (dotted verticals: health warnings)", y=0.995, fontsize=14
    )
    fig.legend(
        handles,
        [r.name for r in runs],
        loc="upper center",
        bbox_to_anchor=(0.5, 0.98),
        ncol=min(len(runs), 6 if max(len(r.name) for r in runs) <= 30 else 3),  # fit the width
        fontsize=12,
        frameon=False,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.955))


def _run_names(dirs: Sequence[Path]) -> list[str]:
    names = [d.resolve().name for d in dirs]
    if len(set(names)) == len(names):
        return names
    return [f"{d.resolve().parent.name}/{d.resolve().name}" for d in dirs]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hackmatrix.analysis.plot",
        description="Draw a PNG dashboard from runs' metrics.jsonl (several runs are overlaid).",
    )
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="PNG to write (default: RUN_DIR/dashboard.png for one run, "
        "./dashboard.png for several)",
    )
    args = parser.parse_args(argv)
    out = args.output or (
        args.run_dirs[0] / "dashboard.png" if len(args.run_dirs) == 1 else Path("dashboard.png")
    )
    try:
        runs = [load_run(d, name) for d, name in zip(args.run_dirs, _run_names(args.run_dirs))]
        path = draw_dashboard(runs, out)
    except PlotError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"Wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
