"""Chunk aggregation, metrics.jsonl and W&B logging (training.md §3)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from ..run_names import wandb_run_id

# Per-update sums that only feed ratios; never logged themselves.
_EPISODE_SUMS = (
    "episode_return_sum",
    "episode_length_sum",
    "weighted_return_sum",
    "final_stage_sum",
)
_SUMMED = (
    "train/num_episodes",
    "train/truncated_episodes",
    "stats/empty_mask_steps",
    "restarts/games",
    "restarts/finished_games",
)
_MAXED = ("stats/highest_stage", "restarts/remembered")
PINNED = ("train/mean_reward", "train/mean_episode_return", "train/mean_episode_length")


def aggregate_chunk(per_update: dict, num_active: int) -> dict[str, float]:
    """Collapse a chunk's per-update metrics (leading axis = update) to one point.

    Loss, reward and action shares are means over the active updates;
    episode return, length and final stage are ratios of sums over the chunk
    (updates with no finished episode do not count as 0); counts are summed; the highest
    stage is a max.
    """
    values = {k: np.asarray(v)[:num_active].astype(np.float64) for k, v in per_update.items()}
    out: dict[str, float] = {}
    for key, series in values.items():
        if key in _EPISODE_SUMS:
            continue
        if key in _SUMMED:
            out[key] = float(series.sum())
        elif key in _MAXED:
            out[key] = float(series.max())
        else:
            out[key] = float(series.mean())
    episodes = values["train/num_episodes"].sum()
    if episodes > 0:
        out["train/mean_episode_return"] = float(values["episode_return_sum"].sum() / episodes)
        out["train/mean_episode_length"] = float(values["episode_length_sum"].sum() / episodes)
        if "final_stage_sum" in values:
            out["stats/mean_final_stage"] = float(values["final_stage_sum"].sum() / episodes)
        if "weighted_return_sum" in values:  # --reward-weights runs only
            out["train/mean_weighted_episode_return"] = float(
                values["weighted_return_sum"].sum() / episodes
            )
    else:  # no episode finished in the whole chunk: nothing to report
        out["train/mean_episode_return"] = math.nan
        out["train/mean_episode_length"] = math.nan
        if "final_stage_sum" in values:
            out["stats/mean_final_stage"] = math.nan
        if "weighted_return_sum" in values:
            out["train/mean_weighted_episode_return"] = math.nan
    return out


def add_progress(
    metrics: dict,
    update: int,
    timesteps: int,
    updates_per_second: float,
    steps_per_second: float,
    includes_compile: bool,
) -> dict:
    metrics = dict(metrics)
    metrics["train/update_step"] = float(update)
    metrics["train/timesteps"] = float(timesteps)
    metrics["train/updates_per_second"] = updates_per_second
    metrics["train/steps_per_second"] = steps_per_second
    metrics["train/includes_compile"] = float(includes_compile)
    for key in PINNED:
        metrics["key/" + key.split("/", 1)[1]] = metrics[key]
    return metrics


class MetricsLogger:
    """Writes every point to `<run_dir>/metrics.jsonl` and, if enabled, to W&B.

    W&B problems are never fatal: they print a warning and logging goes on
    to the file only (§3.5).
    """

    def __init__(
        self,
        run_dir: Path,
        enabled_wandb: bool,
        *,
        project: str,
        entity: str | None,
        run_name: str,
        config: dict,
        skip_through: int = -1,
        rewind_to: int | None = None,
        upload_artifacts: bool = True,
    ):
        self.path = Path(run_dir) / "metrics.jsonl"
        self.skip_through = skip_through
        self.upload_artifacts = upload_artifacts
        self.run = None
        self.url = None
        if enabled_wandb:
            try:
                self._start_wandb(project, entity, run_name, config, rewind_to)
            except Exception as error:
                print(f"WARNING: W&B setup failed ({error}); logging to metrics.jsonl only")
                self.run = None

    def _start_wandb(self, project, entity, run_name, config, rewind_to):
        try:
            import wandb
        except ImportError:
            print("WARNING: wandb is not installed; logging to metrics.jsonl only")
            return
        mode = os.environ.get("WANDB_MODE")
        if mode is None and not _have_wandb_credentials():
            mode = "offline"
            print("W&B: no credentials found, logging offline (upload later with `wandb sync`)")
        run_id = wandb_run_id(run_name)
        kwargs = dict(project=project, entity=entity, name=run_name, config=config, mode=mode)
        if rewind_to is not None:
            owner = entity or _default_entity(wandb)
            kwargs["resume_from"] = f"{owner}/{project}/{run_id}?_step={rewind_to}"
        else:
            kwargs.update(id=run_id, resume="allow")
        try:
            self.run = wandb.init(**kwargs)
            self.url = getattr(self.run, "url", None)
            # Never log twice at a step W&B already has (resume without rewind).
            last = getattr(self.run, "step", 0) or 0
            if rewind_to is None and last > 0:
                self.skip_through = max(self.skip_through, last - 1)
        except Exception as error:
            print(f"WARNING: wandb.init failed ({error}); logging to metrics.jsonl only")
            self.run = None

    def log(self, update: int, metrics: dict, notes: dict | None = None) -> None:
        """One metrics.jsonl record. `notes` are JSON-only entries (e.g. the text of
        health warnings) that go to the file but not to W&B's charts."""
        record = {
            "update": update,
            **{k: _jsonable(v) for k, v in metrics.items()},
            **(notes or {}),
        }
        with open(self.path, "a") as f:
            f.write(json.dumps(record, allow_nan=True) + "\n")
        if self.run is not None and update > self.skip_through:
            try:
                self.run.log(metrics, step=update)
            except Exception as error:
                print(f"WARNING: wandb.log failed ({error})")

    def alert(self, title: str, text: str) -> None:
        """A W&B alert (e-mail / Slack), only for an online run; never fatal."""
        if self.run is None or getattr(self.run, "offline", True):
            return
        try:
            self.run.alert(title=title[:63], text=text, level="WARN")
        except Exception as error:
            print(f"WARNING: wandb.alert failed ({error})")

    def upload(self, path: Path, name: str) -> None:
        if self.run is None or not self.upload_artifacts:
            return
        try:
            import wandb

            artifact = wandb.Artifact(name, type="model")
            artifact.add_file(str(path))
            self.run.log_artifact(artifact)
        except Exception as error:
            print(f"WARNING: artifact upload of {path} failed ({error})")

    def finish(self) -> None:
        if self.run is not None:
            try:
                self.run.finish()
            except Exception as error:
                print(f"WARNING: wandb.finish failed ({error})")
            self.run = None


SUPERSEDED_METRICS = "metrics.superseded.jsonl"


def set_aside_records_after(path: Path, update: int) -> int:
    """Move the records logged after `update` from `path` to `metrics.superseded.jsonl` beside it.

    A resume continues from its checkpoint's update; records past it belong to
    a branch the run no longer continues (a run killed after logging but
    before its next save, or a resume from an older checkpoint). They would
    mix two timelines in one file, so they are set aside, appended in file
    order, never deleted. Lines that do not parse stay where they are.
    Returns how many records moved.
    """
    path = Path(path)
    if not path.is_file():
        return 0
    keep: list[str] = []
    aside: list[str] = []
    for line in path.read_text().splitlines(keepends=True):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = None
        numbered = isinstance(record, dict) and isinstance(record.get("update"), int)
        (aside if numbered and record["update"] > update else keep).append(line)
    if not aside:
        return 0
    with open(path.parent / SUPERSEDED_METRICS, "a") as f:
        f.writelines(line if line.endswith("\n") else line + "\n" for line in aside)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text("".join(keep))
    os.replace(partial, path)  # atomic: a kill now leaves the old or the new file, whole
    return len(aside)


def read_metrics_file(path: Path) -> list[dict]:
    """The records of a metrics.jsonl in file order (null values read as None).

    A torn last line (a run killed mid-write) is skipped; a missing file is
    a FileNotFoundError naming it.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such metrics file")
    records = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            print(f"WARNING: {path}:{number} is not valid JSON; skipped")
    return records


def _have_wandb_credentials() -> bool:
    """An API key in the environment or a wandb entry in the netrc file."""
    if os.environ.get("WANDB_API_KEY"):
        return True
    netrc = Path(os.environ.get("NETRC", Path.home() / ".netrc"))
    try:
        return "api.wandb.ai" in netrc.read_text()
    except OSError:
        return False


def _default_entity(wandb) -> str:
    try:
        return wandb.Api().default_entity
    except Exception as error:
        raise RuntimeError(f"--rewind needs a W&B entity; pass --entity ({error})") from error


def _jsonable(value):
    value = float(value)
    return None if math.isnan(value) else value
