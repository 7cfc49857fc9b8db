"""Checkpoint files, run directories and resume resolution (training.md §4).

Layout under `<checkpoint-dir>/<run_name>/`:
    checkpoint_{update}.pkl   full state (see `save_checkpoint`)
    params_{update}.npz       parameters only, dotted keys ("params.Dense_0.kernel")
    final_params.npz / interrupted_params.npz
Every file is written to a temp file in the same directory and renamed into
place, so a crash mid-write never damages the previous checkpoint.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import os
import pickle
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import flax.linen as nn
import jax
import numpy as np

from .. import run_names
from .device import to_host
from .network import NUM_ACTIONS, OBS_SIZE, network_for_params

FORMAT_VERSION = 1
REQUIRED_KEYS = (
    "format_version",
    "step",
    "params",
    "opt_state",
    "rng",
    "config",
    "metrics",
    "last_logged_step",
)
_CHECKPOINT_RE = re.compile(r"^checkpoint_(\d+)\.pkl$")
_PARAMS_RE = re.compile(r"^params_(\d+)\.npz$")


class CheckpointError(ValueError):
    """A checkpoint path or file that cannot be used; the message names the file."""


# ------------------------------------------------------------------ file writes


def atomic_write(path: Path, write: Callable[[io.BufferedWriter], object]) -> Path:
    """Write `path` via `write(file)` into a temp file, fsync, then rename over it."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def flatten_params(params: Any) -> dict[str, np.ndarray]:
    """`{"params": {"Dense_0": {"kernel": ...}}}` -> `{"params.Dense_0.kernel": ...}`."""
    flat = {}

    def walk(prefix, node):
        if isinstance(node, dict) or hasattr(node, "items"):
            for key, child in node.items():
                walk(f"{prefix}.{key}" if prefix else str(key), child)
        else:
            flat[prefix] = np.asarray(node)

    walk("", to_host(params))
    return flat


def save_params_npz(path: Path, params: Any) -> Path:
    """Write the parameters as a `.npz` of dotted keys (see `flatten_params`)."""
    # Any: numpy's stub reads a ** of str keys as possibly its bool `allow_pickle`.
    arrays: dict[str, Any] = flatten_params(params)
    return atomic_write(path, lambda f: np.savez(f, **arrays))


def export_policy(
    checkpoint_path: Path,
    npz_path: Path,
    *,
    command: str | None = None,
    date_key: str = "exported",
    value_checkpoint: Path | None = None,
) -> dict:
    """Write a checkpoint's parameters as `npz_path` and, beside it, a same-named `.json`
    holding where they came from and the run's config: the form `load_policy` reads
    without the checkpoint (the shipped policy's, and what a lent machine copies out; a
    checkpoint also carries the optimizer and the env batch, megabytes). The record's
    `date_key` names the day (the shipped policy's card says "shipped"). With
    `value_checkpoint`, the written network keeps this checkpoint's policy and takes that
    one's value (`network.with_value_from`; the record's `value_source` says where from).
    Returns the record written to the `.json`."""
    checkpoint_path, npz_path = Path(checkpoint_path), Path(npz_path)
    checkpoint = load_checkpoint(checkpoint_path)
    params, config = checkpoint["params"], dict(checkpoint["config"])
    value_source = None
    if value_checkpoint is not None:
        params, config, value_source = _with_value_of_checkpoint(
            params, config, Path(value_checkpoint)
        )
    save_params_npz(npz_path, params)
    record = {
        "source": {
            "run": checkpoint_path.parent.name,
            "checkpoint": checkpoint_path.name,
            "update": int(checkpoint["step"]),
            "env_steps": int(checkpoint.get("timesteps", 0)),
            "command": command,
            date_key: datetime.date.today().isoformat(),
            "params_sha256": hashlib.sha256(npz_path.read_bytes()).hexdigest(),
        },
        "config": config,
    }
    if value_source is not None:
        record["value_source"] = value_source
    text = json.dumps(record, indent=2, sort_keys=True, default=str) + "\n"
    atomic_write(npz_path.with_suffix(".json"), lambda f: f.write(text.encode()))
    return record


def value_meaning(config: dict) -> dict[str, Any]:
    """What a run's value predicts, by its config: the discount it bootstraps with, the
    scale it reads on and the reward it returns (every option of the trainer's reward
    section), each at its default when an older config lacks it."""
    from .config import TrainConfig
    from .options import declared

    names = {"gamma", "value_target"}
    return {
        item.name: config.get(item.name, item.default)
        for item in declared(TrainConfig)
        if item.name in names or item.spec.section == "reward"
    }


def _with_value_of_checkpoint(params, config: dict, value_path: Path):
    """`params` with the value of the checkpoint at `value_path`, the config that describes
    the result, and a record of the value's source. The value must mean what the policy's
    run meant by one (the same discount, scale and reward); CheckpointError says what
    differs."""
    from .network import with_value_from

    value_checkpoint = load_checkpoint(value_path)
    theirs = dict(value_checkpoint["config"])
    ours_meant, theirs_meant = value_meaning(config), value_meaning(theirs)
    differ = [
        f"{name} {ours_meant[name]!r} against {theirs_meant[name]!r}"
        for name in ours_meant
        if ours_meant[name] != theirs_meant[name]
    ]
    if differ:
        raise CheckpointError(
            f"{value_path}: its value was trained to mean something else than the policy's "
            f"run ({'; '.join(differ)}); a search would misread it"
        )
    try:
        merged = with_value_from(params, value_checkpoint["params"])
    except ValueError as error:
        raise CheckpointError(f"{value_path}: {error}") from error
    value_source = {
        "run": value_path.parent.name,
        "checkpoint": value_path.name,
        "update": int(value_checkpoint["step"]),
        "env_steps": int(value_checkpoint.get("timesteps", 0)),
        "value_trunk": theirs.get("value_trunk") or "shared",
    }
    return merged, {**config, "value_trunk": "separate"}, value_source


def _host(tree):
    return to_host(tree)


def save_checkpoint(
    run_dir: Path,
    step: int,
    runner: Any,
    config: dict,
    *,
    metrics: dict,
    metrics_history: list,
    last_logged_step: int,
    timesteps: int = 0,
    include_env_state: bool = True,
) -> tuple[Path, Path]:
    """Write `checkpoint_{step}.pkl` and `params_{step}.npz`; return both paths.

    The pickle holds plain numpy trees: params, Adam state, the runner RNG
    key, the update counter, the config and metrics. The env batch (states,
    current observations, episode accumulators) is stored too, so a resume
    with the same batch shape continues exactly where the run stopped.
    """
    run_dir = Path(run_dir)
    train_state = runner.train_state
    payload = {
        "format_version": FORMAT_VERSION,
        "step": int(step),
        "params": _host(train_state.params),
        "opt_state": _host(train_state.opt_state),
        "optimizer_step": int(_host(train_state.step)),
        "rng": _host(runner.rng),
        "config": dict(config),
        "obs_size": OBS_SIZE,
        "num_actions": NUM_ACTIONS,
        "metrics": dict(metrics),
        "metrics_history": list(metrics_history),
        "last_logged_step": int(last_logged_step),
        "timesteps": int(timesteps),
        "env_batch": None,
    }
    if include_env_state:
        payload["env_batch"] = {
            "env_state_leaves": jax.tree_util.tree_leaves(_host(runner.env_state)),
            "obs": _host(runner.obs),
            "episode_return": _host(runner.episode_return),
            "episode_length": _host(runner.episode_length),
            # None unless the run trains on a shaped reward
            "weighted_episode_return": _host(getattr(runner, "weighted_episode_return", None)),
            # {shaper name: per-env carry}, e.g. program_use_bonus's "paid this episode"
            "shaping_carry": _host(getattr(runner, "shaping_carry", None) or {}),
        }
    pkl = atomic_write(
        run_dir / f"checkpoint_{step}.pkl",
        lambda f: pickle.dump(payload, f, protocol=pickle.HIGHEST_PROTOCOL),
    )
    npz = save_params_npz(run_dir / f"params_{step}.npz", train_state.params)
    return pkl, npz


def prune_checkpoints(run_dir: Path, keep: int) -> list[Path]:
    """Delete all but the `keep` most recently written `checkpoint_*.pkl`; return what went.

    Recency is the write order (modification time, then step), not the step
    number: after a resume from an earlier checkpoint, files of the abandoned
    branch carry higher steps but are older, and they go first. The small
    `params_*.npz` files stay, so every checkpoint can still be evaluated
    (`evaluate_agent.py`). `keep` 0 keeps everything.
    """
    if keep < 0:
        raise ValueError(f"keep must be 0 or more, got {keep}")
    if keep == 0:
        return []
    found = checkpoints_in(run_dir)
    by_write = sorted(found, key=lambda item: (item[1].stat().st_mtime_ns, item[0]))
    doomed = [path for _, path in by_write[: max(len(by_write) - keep, 0)]]
    for path in doomed:
        path.unlink(missing_ok=True)  # a neighbour process may have removed it already
    return doomed


# ----------------------------------------------------------------------- loading


def load_checkpoint(path: Path) -> dict:
    """Read and sanity-check a checkpoint pickle; errors name the file."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path}: no such file")
    try:
        with open(path, "rb") as f:
            payload = pickle.load(f)
    except Exception as error:
        raise CheckpointError(
            f"checkpoint {path}: unreadable or truncated ({type(error).__name__}: {error})"
        ) from error
    if not isinstance(payload, dict):
        raise CheckpointError(f"checkpoint {path}: expected a dict, found {type(payload).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in payload]
    if missing:
        raise CheckpointError(f"checkpoint {path}: missing fields {missing}")
    if payload["format_version"] != FORMAT_VERSION:
        raise CheckpointError(
            f"checkpoint {path}: format version {payload['format_version']}, "
            f"this trainer reads {FORMAT_VERSION}"
        )
    return payload


def _match_tree(path: Path, what: str, template, stored):
    """Return `stored` shaped like `template`, or raise naming the first mismatch."""
    t_leaves, t_def = jax.tree_util.tree_flatten_with_path(template)
    try:
        s_leaves = jax.tree_util.tree_leaves(stored)
    except Exception as error:
        raise CheckpointError(
            f"checkpoint {path}: {what} is not a readable tree ({error})"
        ) from error
    if len(s_leaves) != len(t_leaves):
        raise CheckpointError(
            f"checkpoint {path}: {what} has {len(s_leaves)} arrays, "
            f"the current model expects {len(t_leaves)}"
        )
    for (key_path, t), s in zip(t_leaves, s_leaves):
        if np.shape(s) != np.shape(t):
            name = jax.tree_util.keystr(key_path)
            raise CheckpointError(
                f"checkpoint {path}: {what}{name} has shape {np.shape(s)}, "
                f"the current config expects {np.shape(t)}"
            )
    return jax.tree_util.tree_unflatten(
        t_def, [np.asarray(s, dtype=np.asarray(t).dtype) for s, (_, t) in zip(s_leaves, t_leaves)]
    )


def restore_runner(
    path: Path,
    payload: dict,
    template: Any,
    *,
    reset_optimizer: bool = False,
    restore_env: bool = True,
) -> tuple[Any, bool]:
    """Fill a freshly initialised runner state from a checkpoint payload.

    Params always come from the checkpoint; Adam state unless
    `reset_optimizer`; the RNG key always (so env seeds do not repeat); the
    env batch only when `restore_env` and the stored shapes match.
    Returns `(runner, env_restored)`.
    """
    params = _match_tree(path, "params", template.train_state.params, payload["params"])
    train_state = template.train_state.replace(params=params)
    if not reset_optimizer:
        opt_state = _match_tree(
            path, "opt_state", template.train_state.opt_state, payload["opt_state"]
        )
        train_state = train_state.replace(
            opt_state=opt_state, step=np.int32(payload.get("optimizer_step", 0))
        )
    rng = np.asarray(payload["rng"])
    if rng.shape != np.shape(template.rng):
        raise CheckpointError(
            f"checkpoint {path}: rng has shape {rng.shape}, expected {np.shape(template.rng)}"
        )
    runner = template._replace(train_state=train_state, rng=rng.astype(np.uint32))

    env_batch = payload.get("env_batch")
    if not (restore_env and env_batch):
        return runner, False
    if np.shape(env_batch["obs"]) != np.shape(template.obs):
        return runner, False
    env_state = _match_tree(path, "env_state", template.env_state, env_batch["env_state_leaves"])
    runner = runner._replace(
        env_state=env_state,
        obs=env_batch["obs"],
        episode_return=env_batch["episode_return"],
        episode_length=env_batch["episode_length"],
    )
    # The weighted accumulator continues only if both runs weigh rewards (else it starts at 0).
    stored_weighted = env_batch.get("weighted_episode_return")
    if (
        stored_weighted is not None
        and getattr(template, "weighted_episode_return", None) is not None
    ):
        runner = runner._replace(weighted_episode_return=stored_weighted)
    # Likewise each shaper's carry, e.g. which episodes have run a program
    # (--program-use-bonus); a shaper the checkpoint did not run starts fresh.
    runner = runner._replace(shaping_carry=_restore_shaping_carry(env_batch, template))
    return runner, True


def _restore_shaping_carry(env_batch: dict, template: Any) -> Any:
    """The template's shaping carries, each replaced by the stored one where the
    checkpoint holds it (checkpoints before the shaping layer stored program_use_bonus's
    carry as `program_used`)."""
    carries = getattr(template, "shaping_carry", None)
    if not carries:
        return carries
    stored = dict(env_batch.get("shaping_carry") or {})
    if env_batch.get("program_used") is not None:
        stored.setdefault("program_use_bonus", env_batch["program_used"])
    return {name: stored.get(name, carry) for name, carry in carries.items()}


# ----------------------------------------------------------- resolving a resume


def _numbered_files(directory: Path, pattern: re.Pattern) -> list[tuple[int, Path]]:
    """`(N, path)` for the files whose name matches `pattern` (N its group 1), by N."""
    found = []
    for entry in Path(directory).iterdir():
        match = pattern.match(entry.name)
        if match and entry.is_file():
            found.append((int(match.group(1)), entry))
    return sorted(found)


def checkpoints_in(run_dir: Path) -> list[tuple[int, Path]]:
    """`(step, path)` of every `checkpoint_{step}.pkl` in `run_dir`, by step."""
    return _numbered_files(run_dir, _CHECKPOINT_RE)


def latest_checkpoint(run_dir: Path) -> Path:
    found = checkpoints_in(run_dir)
    if not found:
        raise CheckpointError(f"run directory {run_dir}: contains no checkpoint_*.pkl")
    return found[-1][1]


def _run_dirs(checkpoint_dir: Path) -> list[Path]:
    if not Path(checkpoint_dir).is_dir():
        return []
    return [d for d in Path(checkpoint_dir).iterdir() if d.is_dir() and checkpoints_in(d)]


def latest_run_checkpoint(checkpoint_dir: Path, flag: str = "--latest") -> Path:
    """The latest checkpoint of the most recently modified run under `checkpoint_dir`."""
    runs = _run_dirs(checkpoint_dir)
    if not runs:
        raise CheckpointError(f"{flag}: no run with checkpoints under {checkpoint_dir}")
    return latest_checkpoint(max(runs, key=lambda d: d.stat().st_mtime))


def resolve_resume(
    value: str | None, resume_run: str | None, checkpoint_dir: Path, latest_marker: str
) -> Path | None:
    """Turn `--resume` / `--resume-run` into a checkpoint file path (§4.4), or None."""
    checkpoint_dir = Path(checkpoint_dir)
    if resume_run is not None:
        for run_dir in _run_dirs(checkpoint_dir):
            if resume_run in (run_dir.name, run_names.wandb_run_id(run_dir.name)):
                return latest_checkpoint(run_dir)
        raise CheckpointError(
            f"--resume-run {resume_run}: no run with that name or W&B id under {checkpoint_dir}"
        )
    if value is None:
        return None
    if value == latest_marker:
        return latest_run_checkpoint(checkpoint_dir, "--resume")
    path = Path(value)
    if path.is_file():
        return path
    if path.is_dir():
        return latest_checkpoint(path)
    if (checkpoint_dir / value).is_dir():
        return latest_checkpoint(checkpoint_dir / value)
    raise CheckpointError(
        f"--resume {value}: no such checkpoint file, run directory, "
        f"or run name under {checkpoint_dir}"
    )


def next_run_name(
    checkpoint_dir: Path, suffix: str | None = None, today: datetime.date | None = None
) -> str:
    """`hackmatrix-jax-{mon}{dd}-{yy}-{N}[-{suffix}]`, all lower case, N one above today's highest.

    Any entry under `checkpoint_dir` with today's prefix counts, files included.
    """
    return run_names.next_run_name(
        checkpoint_dir, suffix, today, prefix="hackmatrix-jax", lowercase=True, count_files=True
    )


def load_params(path: Path) -> Any:
    """Parameters from a `.pkl` checkpoint, a `params_*.npz` or a run directory."""
    path = Path(path)
    if path.is_dir():
        path = latest_checkpoint(path)
    if path.suffix == ".pkl":
        return load_checkpoint(path)["params"]
    if path.suffix != ".npz" or not path.is_file():
        raise CheckpointError(
            f"parameters {path}: expected an existing .pkl, .npz or run directory"
        )
    try:
        with np.load(path) as data:
            flat = {k: data[k] for k in data.files}
    except Exception as error:
        raise CheckpointError(f"parameters {path}: unreadable ({error})") from error
    tree: dict = {}
    for dotted, value in flat.items():
        node = tree
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return tree


# ------------------------------------------------------- a trained policy from a path


@dataclass(frozen=True)
class StoredPolicy:
    """A trained network with its parameters, ready for `network.apply(params, obs)`."""

    network: Any  # the flax module, rebuilt as the run built it
    params: Any  # host numpy tree shaped like `network.init`'s
    source: Path  # the file the parameters came from
    config: dict  # the run's stored training config; {} when none was found


def final_params_in_run(run_dir: Path) -> Path | None:
    """A run's last weights: `final_params.npz`, else its highest `params_{N}.npz`, else None."""
    final = Path(run_dir) / "final_params.npz"
    if final.is_file():
        return final
    numbered = _numbered_files(run_dir, _PARAMS_RE)
    return numbered[-1][1] if numbered else None


def resolve_params_path(path: Path, *, prefer_final_params: bool = False) -> Path:
    """A `.pkl` or `.npz` as given; a run directory means one of its files.

    By default a run directory means its latest `checkpoint_{N}.pkl` (it
    carries the run's config). `prefer_final_params` (the viewer's rule)
    takes the run's last weights instead (`final_params_in_run`), falling
    back to the latest checkpoint when the run wrote no `.npz`.
    """
    path = Path(path)
    if path.is_dir():
        if prefer_final_params:
            found = final_params_in_run(path)
            if found is not None:
                return found
            if not checkpoints_in(path):
                raise CheckpointError(
                    f"run directory {path}: contains no final_params.npz, params_*.npz "
                    "or checkpoint_*.pkl"
                )
        return latest_checkpoint(path)
    if not path.exists():
        raise CheckpointError(f"{path}: no such file or run directory")
    if path.suffix not in (".pkl", ".npz"):
        raise CheckpointError(
            f"{path}: expected a checkpoint_*.pkl, a *.npz parameters file or a run directory"
        )
    return path


def stored_config(path: Path) -> dict:
    """The training config recorded for a parameters file, or {} when there is none.

    A `.pkl` carries it; `params_{N}.npz` takes it from `checkpoint_{N}.pkl`
    beside it, and `final_params.npz` / `interrupted_params.npz` from the
    run's latest checkpoint (same run, same network). A parameters file kept on
    its own (the shipped policy, `hackmatrix/pretrained/`) carries its config in a
    same-named `.json` beside it: `{"config": {...}}`.
    """
    path = Path(path)
    if path.suffix == ".pkl":
        return dict(load_checkpoint(path)["config"])
    card = path.with_suffix(".json")
    if path.suffix == ".npz" and card.is_file():
        try:
            return dict(json.loads(card.read_text())["config"])
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise CheckpointError(f"{card}: unreadable config ({error})") from error
    match = _PARAMS_RE.match(path.name)
    sibling = path.with_name(f"checkpoint_{match.group(1)}.pkl") if match else None
    if sibling is None or not sibling.is_file():
        try:
            sibling = latest_checkpoint(path.parent)
        except CheckpointError:
            return {}
    try:
        return dict(load_checkpoint(sibling)["config"])
    except CheckpointError:
        return {}


def network_from_config(config: dict) -> nn.Module:
    """Rebuild a run's network from its stored config (see `network.network_from_config`)."""
    from .network import network_from_config as build

    return build(config)


def load_initial_params(path: Path, config: dict, template: Any) -> tuple[Any, Path, dict]:
    """`--init-from`: the network weights of a `.pkl`, a `.npz` or a run directory (its
    latest checkpoint), shaped like `template` (this run's freshly initialised params).

    Refuses weights of another network than `config`'s (kind and sizes), naming the flags
    that would build theirs. Weights with a shared trunk start a `--value-trunk separate`
    run with the value trunk a copy of theirs; a `separate-reads-policy` run from weights
    without that reading starts it at zero (the same logits and value); weights never start
    a network with fewer value layers (which would the critic keep?). Returns (params, the file
    read, its run's stored config)."""
    from .network import (
        READS_POLICY,
        network_config_from_params,
        with_critic_reading_policy,
        with_value_trunk_copied,
    )

    source = resolve_params_path(path)
    params = load_params(source)
    try:
        found = network_config_from_params(params)
    except ValueError as error:
        raise CheckpointError(f"--init-from {source}: {error}") from error
    shape = ("network", "hidden_dim", "num_layers")
    if any(found[key] != config[key] for key in shape):
        flags = " ".join(f"--{key.replace('_', '-')} {found[key]}" for key in shape)
        wanted = ", ".join(f"{key}={config[key]}" for key in shape)
        raise CheckpointError(
            f"--init-from {source}: holds a {found['network']} network of "
            f"{found['num_layers']} x {found['hidden_dim']}, this run builds {wanted}; "
            f"give {flags}"
        )
    theirs = found.get("value_trunk", "shared")
    ours = config.get("value_trunk") or "shared"
    # A start may gain value layers (a copied trunk, a zero reading of the policy's), never
    # lose trained ones: which would the critic keep?
    grows = {("shared", "separate"), ("shared", READS_POLICY), ("separate", READS_POLICY)}
    if theirs != ours and (theirs, ours) not in grows:
        kind = "a separate value trunk" if theirs == "separate" else f"value trunk {theirs}"
        raise CheckpointError(
            f"--init-from {source}: holds a network with {kind}, this run builds "
            f"value trunk {ours}; give --value-trunk {theirs}"
        )
    if ours == READS_POLICY and theirs != ours:
        params = with_critic_reading_policy(params)
    elif theirs == "shared" and ours == "separate":
        params = with_value_trunk_copied(params)
    return _match_tree(source, "params", template, params), source, stored_config(source)


def load_policy(path: Path) -> StoredPolicy:
    """Network and parameters from a `.pkl`, a `.npz` or a run directory (its latest checkpoint)."""
    source = resolve_params_path(path)
    params = load_params(source)
    config = stored_config(source)
    try:  # sizes from the parameter shapes, the kind checked against the stored config
        network = network_for_params(params, config)
    except ValueError as error:
        raise CheckpointError(f"parameters {source}: {error}") from error
    shapes = jax.eval_shape(
        network.init, jax.random.PRNGKey(0), np.zeros((1, OBS_SIZE), np.float32)
    )
    template = jax.tree_util.tree_map(lambda s: np.zeros(s.shape, s.dtype), shapes)
    params = _match_tree(source, "params", template, params)
    return StoredPolicy(network=network, params=params, source=source, config=config)
