"""What the trainer prints per chunk and at the end of a run (training.md §3.6).

One short line per chunk (progress, ETA, throughput and the handful of
metrics that say whether the run is healthy); `--console full` adds every
metric as a table grouped by prefix; the run summary at the end says what
the run achieved. Every metric goes to metrics.jsonl either way.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

from .health import CLIP_HEALTHY_BELOW, KL_HEALTHY, HealthWarning

# Prefix order of the full table; other prefixes follow alphabetically.
GROUP_ORDER = ("train", "reward", "actions", "stats", "eval")
# Summary trends compare the mean of the first and last chunks, this share of them.
TREND_SHARE = 0.1
TREND_MAX_CHUNKS = 10
# Neighbouring checkpoints of one run differ by more than an evaluation's own error
# (specs/experiments/28-siphon-pay-on-use.md §28.5), so the summary also averages the last
# few of the run's evaluations.
LATE_EVALS = 3
LATE_EVAL_ROWS = (
    ("stage", "eval/mean_final_stage", ".2f"),
    ("siphons", "eval/siphons_per_episode", ".2f"),
    ("program games", "eval/program_use_rate", ".1%"),
    ("other than UNDO", "eval/program_use_rate_without_undo", ".1%"),
    ("wins", "eval/win_rate", ".1%"),
    ("return", "eval/mean_episode_return", ".2f"),
)


def format_duration(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds) or math.isinf(seconds):
        return "--"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def format_value(value: float | None) -> str:
    """Compact and readable for anything from 1e-5 to millions."""
    if value is None:
        return "-"
    value = float(value)
    if math.isnan(value):
        return "-"
    if value.is_integer() and abs(value) >= 1:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:,.1f}"
    if abs(value) >= 1e-3 or value == 0:
        return f"{value:.4f}"
    return f"{value:.2e}"


def _num(metrics: dict, key: str, spec: str) -> str:
    value = metrics.get(key)
    if value is None or math.isnan(float(value)):
        return "-"
    return format(float(value), spec)


class Progress:
    """Elapsed time and ETA. The first chunk includes compilation, so the rate
    behind the ETA is measured from the end of the first chunk on."""

    def __init__(
        self, total_updates: int, start_update: int = 0, clock: Callable[[], float] = time.time
    ):
        self.total = total_updates
        self.clock = clock
        self.start_time = clock()
        self._steady: tuple[int, float] | None = None  # (update, time) after chunk 1

    def tick(self, update: int) -> tuple[float, float | None]:
        """Call after each chunk: returns (elapsed seconds, ETA seconds or None)."""
        now = self.clock()
        elapsed = now - self.start_time
        if self._steady is None:
            self._steady = (update, now)
            return elapsed, None
        done_updates, seconds = update - self._steady[0], now - self._steady[1]
        if done_updates <= 0 or seconds <= 0:
            return elapsed, None
        return elapsed, (self.total - update) * seconds / done_updates


def chunk_line(
    update: int, total_updates: int, elapsed: float, eta: float | None, metrics: dict
) -> str:
    """The one line printed per chunk (~170 characters)."""
    percent = 100.0 * update / max(total_updates, 1)
    stage_max = metrics.get("stats/highest_stage")
    parts = [
        f"[Update {update}/{total_updates} {percent:.1f}%] {format_duration(elapsed)} "
        f"ETA {format_duration(eta)} {_num(metrics, 'train/steps_per_second', ',.0f')} steps/s",
        f"return {_num(metrics, 'train/mean_episode_return', '.2f')} "
        f"length {_num(metrics, 'train/mean_episode_length', '.1f')}",
        f"stage max {'-' if stage_max is None else f'{stage_max:.0f}'} "
        f"mean {_num(metrics, 'stats/mean_final_stage', '.2f')}",
        f"entropy {_num(metrics, 'train/entropy', '.3f')} " + _step_size(metrics),
        f"siphon {_num(metrics, 'actions/siphon_frac', '.4f')} "
        f"program {_num(metrics, 'actions/program_frac', '.4f')}",
    ]
    evals = {k: v for k, v in metrics.items() if k.startswith("eval/")}
    if evals:
        parts.append(
            "eval " + " ".join(f"{k[5:]} {format_value(v)}" for k, v in sorted(evals.items()))
        )
    return " | ".join(parts)


def _step_size(metrics: dict) -> str:
    """PPO's step size (KL, clip fraction); for expert iteration how far the network is
    from its search (KL(search || network), the share of steps their best actions agree)."""
    if "search/kl" in metrics:
        return (
            f"search kl {_num(metrics, 'search/kl', '.3f')} "
            f"agree {_num(metrics, 'search/agreement', '.3f')}"
        )
    return (
        f"kl {_num(metrics, 'train/approx_kl', '.4f')} "
        f"clip {_num(metrics, 'train/clip_frac', '.3f')}"
    )


def grouped_table(metrics: dict, columns: int = 3) -> str:
    """Every metric, grouped by prefix (`--console full`)."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for key in sorted(metrics):
        prefix, _, name = key.rpartition("/")
        groups.setdefault(prefix or "other", []).append((name, format_value(metrics[key])))
    order = [g for g in GROUP_ORDER if g in groups] + sorted(
        g for g in groups if g not in GROUP_ORDER
    )
    width = max((len(n) + len(v) + 1 for rows in groups.values() for n, v in rows), default=10)
    lines = []
    for group in order:
        rows = groups[group]
        for start in range(0, len(rows), columns):
            cells = [f"{n} {v:>{width - len(n) - 1}}" for n, v in rows[start : start + columns]]
            label = f"{group}/" if start == 0 else ""
            lines.append(f"  {label:<9}" + "   ".join(cells))
    return "\n".join(lines)


def warning_line(warning: HealthWarning) -> str:
    return f"  HEALTH WARNING [{warning.check}] {warning.text()}"


# ------------------------------------------------------------------ run summary
def _series(records: Sequence[dict], key: str) -> list[float]:
    """The finite values of `key` across records (missing, NaN and inf are skipped)."""
    return [float(r[key]) for r in records if _finite(r.get(key))]


def _trend(records: Sequence[dict], key: str, spec: str) -> str | None:
    values = _series(records, key)
    if not values:
        return None
    k = max(1, min(TREND_MAX_CHUNKS, int(len(values) * TREND_SHARE)))
    first, last = sum(values[:k]) / k, sum(values[-k:]) / k
    return f"{format(first, spec)} -> {format(last, spec)}"


def _peaks(chunks: Sequence[dict]) -> list[str]:
    """The largest PPO step of the run: peak KL and clip fraction, with their updates."""
    parts = []
    for label, key in (("KL", "train/approx_kl"), ("clip", "train/clip_frac")):
        seen = [(float(r[key]), r["update"]) for r in chunks if _finite(r.get(key))]
        if seen:
            value, update = max(seen, key=lambda pair: pair[0])
            parts.append(f"{label} {value:.4f} (update {update})")
    if not parts:
        return []
    bands = f"healthy: KL < {KL_HEALTHY[1]:g}, clip < {CLIP_HEALTHY_BELOW:g}"
    return [f"  {'peak':<17} {', '.join(parts)} ({bands})"]


def _late_evals(evals: Sequence[dict], count: int) -> list[str]:
    """The mean and range of headline numbers over the last `count` evaluations (one per
    update: a resumed run that logged an update twice counts its later record)."""
    by_update = {r.get("update"): r for r in evals}
    late = [by_update[u] for u in sorted(by_update, key=lambda u: (u is None, u))][-count:]
    if len(late) < 2:
        return []
    parts = []
    for label, key, spec in LATE_EVAL_ROWS:
        values = _series(late, key)
        if values:
            mean = sum(values) / len(values)
            low, high = min(values), max(values)
            only = f" [{len(values)} of {len(late)}]" if len(values) < len(late) else ""
            parts.append(f"{label} {mean:{spec}} ({low:{spec}}..{high:{spec}}){only}")
    updates = ", ".join(str(r.get("update")) for r in late)
    return [f"  last {len(late)} evals   (updates {updates}), mean (range): {'; '.join(parts)}"]


def _finite(value) -> bool:
    if value is None or isinstance(value, (bool, str)):
        return False
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def run_summary(records: Sequence[dict], last_evals: int = LATE_EVALS) -> list[str]:
    """What the run achieved: trends of return and stage (first vs last chunks), the
    peak KL and clip, the last behaviour evaluation and the mean of the last few, and
    the health warnings it raised."""
    chunks = [r for r in records if "train/timesteps" in r]
    if not chunks:
        return ["Run summary: no chunk finished"]
    k = max(1, min(TREND_MAX_CHUNKS, int(len(chunks) * TREND_SHARE)))
    steps = chunks[-1].get("train/timesteps") or 0
    lines = [
        f"Run summary: {len(chunks)} chunks, updates {chunks[0]['update']}-{chunks[-1]['update']}, "
        f"{steps:,.0f} env steps (trends: mean of the first {k} vs the last {k} chunks)"
    ]
    rows = [
        ("mean return", "train/mean_episode_return", ".2f"),
        ("mean length", "train/mean_episode_length", ".1f"),
        ("mean final stage", "stats/mean_final_stage", ".2f"),
        ("highest stage", "stats/highest_stage", ".1f"),
        ("entropy", "train/entropy", ".3f"),
        ("siphon frac", "actions/siphon_frac", ".4f"),
        ("program frac", "actions/program_frac", ".4f"),
    ]
    for label, key, spec in rows:
        trend = _trend(chunks, key, spec)
        if trend is not None:
            lines.append(f"  {label:<17} {trend}")
    best = _series(chunks, "stats/highest_stage")
    if best:
        lines.append(f"  {'best stage':<17} {max(best):.0f}")
    lines += _peaks(chunks)
    evals = [r for r in records if any(k.startswith("eval/") for k in r)]
    if evals:
        last = evals[-1]
        values = ", ".join(
            f"{k}: {format_value(v)}" for k, v in sorted(last.items()) if k.startswith("eval/")
        )
        lines.append(f"  last eval (update {last.get('update')}): {values}")
        lines += _late_evals(evals, last_evals)
    else:
        lines.append("  no eval/* metrics were logged")
    warnings = [w for r in records for w in r.get("health/warnings", [])]
    if warnings:
        listed = ", ".join(f"{w['check']} (update {w['update']})" for w in warnings)
        lines.append(f"  health warnings: {listed}")
    else:
        lines.append("  health warnings: none")
    return lines
