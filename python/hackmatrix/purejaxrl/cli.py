"""The training driver behind `scripts/train_purejaxrl.py` (training.md §1, §3.6, §4).

Order of work, one function each: resolve the configuration (option defaults < preset <
checkpoint < command line, `resolve.py`) and check it; start the processes and load the
game; print the machine and the final configuration (device tuning, auto-scaling);
open the run (its identity, directory and logger); build and initialise (or restore) the
trainer; then loop over compiled chunks, with a log line, the health checks and a
checkpoint check after each, and the checkpoint's extras (episode GIF, evaluation) as
callbacks of a save.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ..run_names import git_commit
from . import config as cfg
from . import curriculum_flags
from .console import Progress, chunk_line, grouped_table, run_summary, warning_line
from .device import (
    PROVENANCE_PACKAGES,
    agree_across_processes,
    describe_devices,
    describe_software,
    enable_compilation_cache,
    initialize_multi_host,
    peer_failure_message,
    provenance_changes,
    sync_processes,
    to_host,
)
from .health import HealthMonitor
from .metrics import (
    SUPERSEDED_METRICS,
    MetricsLogger,
    add_progress,
    aggregate_chunk,
    read_metrics_file,
    set_aside_records_after,
)
from .options import DEFAULT
from .presets import load_preset
from .resolve import (
    AUTO_SCALED,
    AUTO_TUNED,
    BUDGET_RAISED,
    NETWORK_SHAPE,
    Resolved,
    config_table,
    parser_with_presets,
    resolve,
    resume_changes,
)

# A save's extra: called with the update and the saved parameters (host arrays).
SaveCallback = Callable[[int, Any], None]


def curriculum_env_params(config: cfg.TrainConfig, env: ModuleType, curriculum, update: int):
    """The env params at `update`'s curriculum probability; None without a curriculum
    (`curriculum_flags.resolve(config)`). The probability is traced: no recompile."""
    if curriculum is None:
        return None
    probability = curriculum.probability(update, config.num_updates)
    return curriculum_flags.env_params_for(env, curriculum, probability)


def schedule_metrics(config: cfg.TrainConfig, curriculum, updates: range) -> dict[str, float]:
    """The scheduled settings of a chunk's `updates`, each the mean over them (a switch
    inside the chunk reads as the share of its updates switched on); only those that move."""
    from .train import (
        ent_coef_at,
        program_levers_at,
        reward_anneal_progress,
        search_select_at,
        value_only_at,
    )

    readings: dict[str, Any] = {}
    if curriculum is not None:
        readings["curriculum/probability"] = lambda u: curriculum.probability(u, config.num_updates)
    if config.reward_weights_anneal is not None:
        readings["train/reward_weights_progress"] = lambda u: reward_anneal_progress(config, u)
    if config.ent_coef_anneal is not None:
        readings["train/ent_coef"] = lambda u: ent_coef_at(config, u)
    if config.program_levers_from_update > 0:
        readings["train/program_levers"] = lambda u: program_levers_at(config, u)
    if config.search_select_from_update > 0:
        readings["train/search_select"] = lambda u: search_select_at(config, u)
    if config.value_warmup_updates > 0:
        readings["train/value_only"] = lambda u: value_only_at(config, u)
    return {name: float(np.mean([read(u) for u in updates])) for name, read in readings.items()}


class StopRequest:
    """Turns SIGINT/SIGTERM into a flag checked between chunks (jit calls cannot be interrupted)."""

    def __init__(self) -> None:
        self.signal_name: str | None = None
        self._previous: dict[int, Any] = {}  # signal number -> the handler it replaced

    def install(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum, _frame):
        if self.signal_name is not None:  # a second Ctrl+C while saving: give up at once
            raise KeyboardInterrupt
        self.signal_name = signal.Signals(signum).name
        print(
            f"\n{self.signal_name} received: saving after the current chunk finishes...", flush=True
        )


def print_autoscale(report: cfg.AutoScaleReport, lr: float) -> None:
    if not report.changed:
        return
    print(f"Auto-scaling for batch size {report.batch_size:,} (scale factor {report.scale}):")
    for key in ("num_minibatches", "minibatch_size", "update_epochs", "gradient_steps"):
        print(f"  {key:16s} {report.before[key]:>8,} -> {report.after[key]:,}")
    print(
        f"  LR hint: lr x gradient_steps ~ {cfg.LR_STEPS_PRODUCT:g} "
        f"suggests --lr {report.lr_hint:.3g} "
        f"(current {lr:g}; never changed automatically)"
    )


def load_env(module_name: str) -> ModuleType:
    import importlib

    return importlib.import_module(module_name)


def main(argv: Sequence[str] | None = None, env: ModuleType | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser_with_presets().parse_args(argv)  # --help, and argparse's errors for bad values
    try:
        return _train(argv, env)
    except (ValueError, FileExistsError) as error:  # CheckpointError and PresetError included
        print(f"error: {error}", file=sys.stderr)
        return 2
    except Exception as error:
        message = peer_failure_message(error)
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        # Skip jax's shutdown barrier: the dead peer would hold it until the heartbeat timeout.
        os._exit(3)


def _train(argv: Sequence[str], env: ModuleType | None) -> int:
    plan = resolve_plan(argv)
    if plan.run.print_config:
        print(json.dumps(plan.resolved.to_json(), indent=2, default=str))
        return 0
    host = start_host(plan)
    env, curriculum = load_game(plan, env)
    finish_config(plan, host, curriculum)
    opened = open_run(plan, host)
    if opened is None:
        return 0
    loop = build(plan, host, opened, env, curriculum)
    return train_loop(loop)


# ------------------------------------------------------------------ configuration


@dataclasses.dataclass
class Plan:
    """What this run trains and how: the resolved configuration and the checkpoint."""

    resolved: Resolved
    resume_path: Path | None
    payload: dict | None  # the checkpoint read, on a resume

    @property
    def config(self) -> cfg.TrainConfig:
        return self.resolved.config

    @property
    def run(self) -> cfg.RunOptions:
        return self.resolved.run


def resolve_plan(argv: Sequence[str]) -> Plan:
    """Layer defaults, preset, checkpoint and command line; check the result.

    The run options come first (they say which checkpoint to resume); the training
    config then takes the checkpoint's stored values over the preset's."""
    cli_values = cfg.command_line_values(argv)
    preset = load_preset(cli_values.get("preset", cfg.DEFAULT_PRESET))
    run = resolve(cli_values, preset).run
    if run.rewind and run.resume is None and run.resume_run is None:
        raise ValueError("--rewind only makes sense together with --resume")
    if run.init_from is not None and (run.resume is not None or run.resume_run is not None):
        raise ValueError(
            "--init-from starts a fresh run from a checkpoint's weights; --resume continues "
            "one: give one of them"
        )
    resume_path = payload = None
    if run.resume is not None or run.resume_run is not None:
        from .checkpoint import load_checkpoint, resolve_resume

        resume_path = resolve_resume(
            run.resume, run.resume_run, Path(run.checkpoint_dir), cfg.RESUME_LATEST
        )
        payload = load_checkpoint(resume_path) if resume_path else None
    stored = payload["config"] if payload is not None else None
    resolved = resolve(cli_values, preset, stored)
    cfg.validate(resolved.config)
    return Plan(resolved, resume_path, payload)


@dataclasses.dataclass
class Host:
    """This process's place: devices, software, whether it writes the files, its printer."""

    devices: dict
    software: dict
    cache_dir: str
    is_main: bool
    say: Callable[..., None]


def start_host(plan: Plan) -> Host:
    """Join the other processes (multi-host), enable the compilation cache, read the devices."""
    run = plan.run
    if run.multi_host or any(
        value is not None for value in (run.coordinator_address, run.num_processes, run.process_id)
    ):
        initialize_multi_host(
            run.coordinator_address, run.num_processes, run.process_id, run.distributed_timeout
        )
    cache_dir = enable_compilation_cache()
    devices = describe_devices()
    is_main = devices["process_index"] == 0
    return Host(
        devices=devices,
        software=describe_software(),
        cache_dir=str(cache_dir),
        is_main=is_main,
        say=print if is_main else (lambda *a, **k: None),
    )


def load_game(plan: Plan, env: ModuleType | None) -> tuple[ModuleType, Any]:
    """The game module and the curriculum, checked by it: a bad --reward-weights name or
    curriculum value fails here, before a run directory exists."""
    config = plan.config
    env = env if env is not None else load_env(plan.run.env_module)
    cfg.check_reward_weight_names(config.reward_weights, env.REWARD_COMPONENT_NAMES)
    cfg.check_reward_weight_names(
        config.reward_weights_final, env.REWARD_COMPONENT_NAMES, "--reward-weights-final"
    )
    curriculum = curriculum_flags.resolve(config)
    if curriculum is not None:  # the game's own checks, before compiling
        curriculum_flags.env_params_for(env, curriculum, curriculum.p0)
    if config.algorithm == cfg.EXPERT_ITERATION:
        from .expert_iteration import check_engine

        check_engine(env)
    return env, curriculum


def finish_config(plan: Plan, host: Host, curriculum) -> None:
    """Print the machine; tune for the device and auto-scale the batch; print the final
    configuration with where each value came from, and what the layers continued or dropped."""
    config, sources, say = plan.config, plan.resolved.sources, host.say
    devices, software = host.devices, host.software
    say(f"Device: {devices['device_type']} ({devices['device_kind']})")
    say(
        f"Device count: {devices['device_count']}"
        + (f" over {devices['process_count']} hosts" if devices["process_count"] > 1 else "")
    )
    say(f"Backend: {devices['backend']}")
    say(
        "Software: "
        + ", ".join(f"{name} {software[name]}" for name in ("python", *PROVENANCE_PACKAGES))
        + f"; CPU: {software['cpu']}"
    )
    say(f"Compilation cache: {host.cache_dir}")
    if plan.run.auto_tune:
        # Only what no layer set: a preset's, checkpoint's or flag's value is kept.
        given = {name for name, source in sources.items() if source != DEFAULT}
        before = config.to_dict()
        for change in cfg.apply_device_tuning(
            config, devices["device_type"], devices["device_count"], given
        ):
            say(f"Auto-tune: {change}")
        sources.update({n: AUTO_TUNED for n, v in before.items() if getattr(config, n) != v})
    unset = [n for n in ("num_minibatches", "update_epochs") if getattr(config, n) is None]
    budget_warning = cfg.enforce_minimum_budget(config)
    if budget_warning:
        sources["total_timesteps"] = BUDGET_RAISED
    report = cfg.auto_scale_for_batch_size(config)
    sources.update(dict.fromkeys(unset, AUTO_SCALED))
    cfg.validate(config)
    if budget_warning:
        say(f"WARNING: {budget_warning}")
    if host.is_main:
        print_autoscale(report, config.lr)
        print("\n".join(config_table(plan.resolved)))
    for line in plan.resolved.lines:
        say(line)
    notes = (
        cfg.program_levers_note(config),
        cfg.program_levers_batch_note(config),
        cfg.search_select_note(config),
        cfg.value_warmup_note(config),
    )
    for levers_note in notes:
        if levers_note:
            say(levers_note)
    say(
        f"Curriculum: {curriculum.describe()}"
        if curriculum
        else "Curriculum: none (canonical starts)"
    )


# ---------------------------------------------------------------- run directory


@dataclasses.dataclass
class OpenedRun:
    """The run's identity and files, and where training continues from."""

    run_dir: Path
    run_name: str
    start_update: int
    last_logged: int
    timesteps: int
    history: list
    logger: MetricsLogger | None  # the main process's; None on the others


def open_run(plan: Plan, host: Host) -> OpenedRun | None:
    """The run's name and directory (a resume's, or a fresh one), what a resume changes,
    and the logger. None when a resumed run has nothing left to train."""
    config, run, say = plan.config, plan.run, host.say
    opened = _resumed_run(plan, host) if plan.payload is not None else _fresh_run(plan, say)
    remaining = config.num_updates - opened.start_update
    if plan.payload is not None:
        say(
            f"Updates: {opened.start_update} done, {max(remaining, 0)} remaining "
            f"of {config.num_updates}"
        )
    if remaining <= 0:
        say(
            "Nothing left to train: the checkpoint already reached --total-timesteps "
            "(give a larger total to extend the run)"
        )
        return None
    sync_processes("run directory checked")  # before process 0 creates it, or the others
    if host.is_main:  # would refuse it
        opened.run_dir.mkdir(parents=True, exist_ok=True)
        opened.logger = _open_logger(plan, host, opened)
    period = (
        f"{run.save_interval} updates"
        if run.save_interval is not None
        else f"{run.save_interval_minutes:g} minutes"
    )
    kept = f", keeping the newest {run.keep_checkpoints}" if run.keep_checkpoints else ""
    say(f"Checkpoints: every {period} -> {opened.run_dir}{kept}")
    return opened


def _fresh_run(plan: Plan, say) -> OpenedRun:
    run = plan.run
    checkpoint_dir = Path(run.checkpoint_dir)
    if run.run_name:
        run_name = f"{run.run_name}-{run.run_suffix}" if run.run_suffix else run.run_name
    else:
        from .checkpoint import next_run_name

        run_name = next_run_name(checkpoint_dir, run.run_suffix)
    run_dir = checkpoint_dir / run_name
    if run_dir.exists() and any(run_dir.iterdir()):
        raise FileExistsError(
            f"run directory {run_dir} already exists and is not empty; "
            f"use --resume {run_dir} to continue it or pick another --run-name"
        )
    say(f"Run name: {run_name}")
    return OpenedRun(run_dir, run_name, 0, -1, 0, [], None)


def _resumed_run(plan: Plan, host: Host) -> OpenedRun:
    """The checkpoint's run, with a line for everything this resume changes: the batch
    shape (Adam's moments were tuned to it), each stored option given anew, the machine."""
    from .checkpoint import CheckpointError

    config, payload, say = plan.config, plan.payload, host.say
    assert payload is not None and plan.resume_path is not None  # a resume
    stored = payload["config"]
    start_update = payload["step"]
    if (stored.get("num_envs"), stored.get("num_steps")) != (config.num_envs, config.num_steps):
        say(
            "WARNING: batch shape changed from "
            f"{stored.get('num_envs')}x{stored.get('num_steps')} "
            f"to {config.num_envs}x{config.num_steps}; "
            "Adam moments were tuned to the old batch "
            f"(consider --reset-optimizer or a fresh run)"
        )
    for note in resume_changes(stored, config):
        say(note)
    # Checkpoints from before --network are mlp, from before --value-trunk shared.
    stored = {"network": "mlp", "value_trunk": "shared", **stored}
    for key in NETWORK_SHAPE:
        if stored.get(key) != getattr(config, key):
            raise CheckpointError(
                f"checkpoint {plan.resume_path}: trained with {key}={stored.get(key)}, "
                f"but this run asks for {getattr(config, key)}"
            )
    changed = provenance_changes(stored.get("provenance"), host.software)
    if changed:
        say(
            "Note: the checkpoint was trained with other software or hardware ("
            + "; ".join(changed)
            + "): the run goes on, but not bit for bit as it would have there"
        )
    run_dir = plan.resume_path.parent
    say(f"Resuming run {run_dir.name} from {plan.resume_path.name} (update {start_update})")
    return OpenedRun(
        run_dir=run_dir,
        run_name=run_dir.name,
        start_update=start_update,
        last_logged=payload["last_logged_step"],
        timesteps=payload.get("timesteps", start_update * config.batch_size),
        history=list(payload.get("metrics_history", [])),
        logger=None,
    )


def _open_logger(plan: Plan, host: Host, opened: OpenedRun) -> MetricsLogger:
    """metrics.jsonl and W&B (the main process's); a resume first sets aside the records of
    a branch its checkpoint does not continue."""
    config, run, say, devices = plan.config, plan.run, host.say, host.devices
    if plan.payload is not None:
        moved = set_aside_records_after(opened.run_dir / "metrics.jsonl", opened.start_update)
        if moved:
            say(
                f"metrics.jsonl: {moved} records logged after update {opened.start_update} "
                f"belong to a branch this checkpoint does not continue; moved to "
                f"{SUPERSEDED_METRICS}"
            )
    wandb_config = {
        **config.to_dict(),
        "batch_size": config.batch_size,
        "minibatch_size": config.minibatch_size,
        "num_updates": config.num_updates,
        "gradient_steps": config.gradient_steps,
        "device_type": devices["device_type"],
        "device_count": devices["device_count"],
        "backend": devices["backend"],
        "provenance": host.software,
        "git_commit": git_commit(),
        "preset": plan.resolved.preset.name,
    }
    logger = MetricsLogger(
        opened.run_dir,
        run.wandb,
        project=run.project,
        entity=run.entity,
        run_name=opened.run_name,
        config=wandb_config,
        skip_through=-1 if run.rewind else opened.last_logged,
        rewind_to=opened.last_logged if (run.rewind and plan.payload is not None) else None,
        upload_artifacts=run.artifact,
    )
    say(f"W&B: {logger.url or ('offline / unavailable' if run.wandb else 'off')}")
    return logger


# ------------------------------------------------------------------------ build


def episode_gif_callback(env, network, run_dir: Path, seed: int, logger, say) -> SaveCallback:
    """At each save, the policy playing one game, saved as episode_{update}.gif."""
    from ..analysis.episode_gif import EpisodeGif

    gif = EpisodeGif(env, network, run_dir, seed=seed, say=say)

    def record(update: int, params: Any) -> None:
        path = gif.record(update, params, logger)
        if path is not None:
            say(f"Saved {path.name}")

    return record


def evaluation_callback(env, network, episodes: int, mode: str, logger, say) -> SaveCallback:
    """At each save, the behaviour evaluation's games, logged as eval/* (training.md §9.5)."""
    from ..analysis.checkpoint_eval import CheckpointEvaluation

    evaluation = CheckpointEvaluation(env, network, episodes=episodes, mode=mode, say=say)

    def run(update: int, params: Any) -> None:
        metrics = evaluation.run(update, params)
        if metrics is not None:
            logger.log(update, metrics)

    return run


@dataclasses.dataclass
class Loop:
    """Everything the training loop reads and moves forward."""

    plan: Plan
    host: Host
    opened: OpenedRun
    trainer: Any
    runner: Any
    curriculum: Any
    save_callbacks: list[SaveCallback]
    update: int
    last_metrics: dict


def build(plan: Plan, host: Host, opened: OpenedRun, env: ModuleType, curriculum) -> Loop:
    """The trainer for this config, the save callbacks, and the runner: initialised from
    the seed, then, on a resume, filled from the checkpoint."""
    import jax

    from .train import make_mesh, make_train, place_runner_state

    config, run, say = plan.config, plan.run, host.say
    start = opened.start_update
    env_params = curriculum_env_params(config, env, curriculum, start)
    trainer = make_train(config, env, env_params, mesh=make_mesh(jax.devices()))
    callbacks: list[SaveCallback] = []
    if host.is_main:
        from .network import describe_network

        say(describe_network(trainer.network))
        logger = opened.logger
        if run.episode_gif:
            callbacks.append(
                episode_gif_callback(env, trainer.network, opened.run_dir, config.seed, logger, say)
            )
        if run.eval_episodes > 0:
            callbacks.append(
                evaluation_callback(
                    env, trainer.network, run.eval_episodes, run.eval_policy, logger, say
                )
            )
    runner = trainer.init(jax.random.PRNGKey(config.seed))
    if run.init_from is not None:
        runner = _init_from(plan, trainer, runner, say)
    if plan.payload is not None:
        from .checkpoint import restore_runner

        assert plan.resume_path is not None  # the payload was read from it
        runner, env_restored = restore_runner(
            plan.resume_path, plan.payload, to_host(runner), reset_optimizer=run.reset_optimizer
        )
        runner = place_runner_state(trainer, runner)
        trained_with = plan.payload["config"].get("value_target", "raw")
        if trained_with != config.value_target:
            params = _restart_value_head(runner.train_state.params, trainer)
            runner = runner._replace(train_state=runner.train_state.replace(params=params))
            say(
                f"Note: the value head learned on the {trained_with} scale; from here it "
                f"learns on {config.value_target}: its layer starts from zero (V = 0)"
            )
        say(
            "Restored params"
            + ("" if run.reset_optimizer else ", Adam state")
            + ", RNG key"
            + (" and the env batch" if env_restored else "; environments start fresh")
        )
    last_metrics = plan.payload["metrics"] if plan.payload else {}
    return Loop(plan, host, opened, trainer, runner, curriculum, callbacks, start, last_metrics)


def _init_from(plan: Plan, trainer: Any, runner: Any, say) -> Any:
    """`--init-from`: this fresh runner with a checkpoint's network weights (a fresh
    optimizer and fresh games)."""
    import jax

    from .checkpoint import load_initial_params

    config = plan.config
    assert plan.run.init_from is not None
    template = jax.device_get(runner.train_state.params)
    params, source, stored = load_initial_params(
        Path(plan.run.init_from), config.to_dict(), template
    )
    params = jax.device_put(params, trainer.replicated)
    say(f"Initialised the network from {source} (weights only: fresh optimizer and games)")
    theirs = (stored or {}).get("value_trunk") or "shared"
    if config.value_trunk != "shared" and theirs == "shared":
        say("Note: the value trunk starts as a copy of the shared trunk it was read from")
    if config.value_trunk == cfg.READS_POLICY and theirs != cfg.READS_POLICY:
        say("Note: the critic's reading of the policy trunk's features starts at zero")
    trained_with = stored.get("value_target", "raw") if stored else None
    if trained_with is not None and trained_with != config.value_target:
        params = _restart_value_head(params, trainer)
        say(
            f"Note: {source} learned its value head on the {trained_with} scale, this run "
            f"trains it on {config.value_target}: the head's layer starts from zero "
            "(V = 0) and relearns its scale"
        )
    return runner._replace(train_state=runner.train_state.replace(params=params))


def _restart_value_head(params: Any, trainer: Any) -> Any:
    """The value head's layer zeroed (V = 0), for a head that learned another scale."""
    import jax

    from .network import with_value_head_zeroed

    return jax.device_put(with_value_head_zeroed(jax.device_get(params)), trainer.replicated)


# ------------------------------------------------------------------------- loop


def save(loop: Loop, reason: str, with_extras: bool = True) -> None:
    """Checkpoint files, then (if `with_extras`) the save callbacks (GIF, evaluation)."""
    from .checkpoint import prune_checkpoints, save_checkpoint

    host_runner = to_host(loop.runner)  # on every process: the env batch is gathered from all
    opened, say = loop.opened, loop.host.say
    if opened.logger is None:  # only the main process writes files
        return
    stored = {
        **loop.plan.config.to_dict(),
        "run_name": opened.run_name,
        "provenance": loop.host.software,
        "preset": loop.plan.resolved.preset.name,
    }
    pkl, npz = save_checkpoint(
        opened.run_dir,
        loop.update,
        host_runner,
        stored,
        metrics=loop.last_metrics,
        metrics_history=opened.history,
        last_logged_step=opened.last_logged,
        timesteps=opened.timesteps,
    )
    say(f"Saved {pkl.name} and {npz.name} ({reason})")
    opened.logger.upload(pkl, f"checkpoint-{loop.update}")
    removed = prune_checkpoints(opened.run_dir, loop.plan.run.keep_checkpoints)
    if removed:
        say(f"Removed {', '.join(path.name for path in removed)} (--keep-checkpoints)")
    if with_extras:
        for callback in loop.save_callbacks:
            callback(loop.update, host_runner.train_state.params)


def train_chunk(loop: Loop, first_chunk: bool) -> dict:
    """One compiled chunk: `--log-interval` updates, cut short at the end of the run (a
    schedule switching inside a chunk switches on its own update). Returns its metrics."""
    config, opened = loop.plan.config, loop.opened
    active = min(config.log_interval, config.num_updates - loop.update)
    chunk_start = time.time()
    inputs = loop.trainer.chunk_inputs(loop.update)
    loop.runner, per_update = loop.trainer.train_chunk(loop.runner, active, inputs)
    per_update = to_host(per_update)
    seconds = time.time() - chunk_start
    loop.update += active
    opened.timesteps += active * config.batch_size
    metrics = aggregate_chunk(per_update, active)
    metrics.update(
        schedule_metrics(config, loop.curriculum, range(loop.update - active, loop.update))
    )
    steps_per_second = active * config.batch_size / seconds
    return add_progress(
        metrics, loop.update, opened.timesteps, active / seconds, steps_per_second, first_chunk
    )


def report_chunk(loop: Loop, metrics: dict, health: HealthMonitor, progress: Progress) -> None:
    """The health checks, the console line (and table), metrics.jsonl and W&B."""
    opened, say, update = loop.opened, loop.host.say, loop.update
    health_warnings = health.observe(update, metrics)
    metrics["health/active_warnings"] = float(len(health.active))
    loop.last_metrics = metrics
    opened.history.append({"update": update, **metrics})
    elapsed, eta = progress.tick(update)
    say(chunk_line(update, loop.plan.config.num_updates, elapsed, eta, metrics), flush=True)
    if loop.plan.run.console == "full":
        say(grouped_table(metrics), flush=True)
    for warning in health_warnings:
        say(warning_line(warning), flush=True)
    if opened.logger:
        notes = (
            {"health/warnings": [w.to_json() for w in health_warnings]} if health_warnings else None
        )
        opened.logger.log(update, metrics, notes)
        for warning in health_warnings:
            opened.logger.alert(f"HackMatrix {opened.run_name}: {warning.check}", warning.text())
    opened.last_logged = update


def time_is_up(run: cfg.RunOptions, start_time: float) -> bool:
    """`--time-limit-minutes`: has the run trained that long? Every process takes process
    0's answer, as for a timed save (see agree_across_processes)."""
    if run.time_limit_minutes is None:
        return False
    up = time.time() - start_time >= run.time_limit_minutes * 60
    return agree_across_processes(False, up)[1]


def train_loop(loop: Loop) -> int:
    """Chunks until the run's last update, its time limit or a stop request; a scheduled
    save whenever one is due, a final save at the end (or the time limit), an interrupt
    save on a stop."""
    config, run, say = loop.plan.config, loop.plan.run, loop.host.say
    stop = StopRequest()
    stop.install()
    last_save_update, last_save_time = loop.update, time.time()  # reset after the first chunk
    say(
        "Compiling the training chunk (first call; can take minutes on an accelerator)...",
        flush=True,
    )
    start_time = time.time()
    progress = Progress(config.num_updates, loop.opened.start_update)
    health = HealthMonitor()
    health.prime(loop.opened.history)  # a resume continues the windows of the oscillation checks
    first_chunk = True
    timed_out = False
    warnings.filterwarnings("ignore", message="Some donated buffers were not usable")
    # Every process stops at the same chunk (see agree_across_processes).
    stopping, _ = agree_across_processes(stop.signal_name is not None, False)
    try:
        while loop.update < config.num_updates and not stopping:
            report_chunk(loop, train_chunk(loop, first_chunk), health, progress)
            if first_chunk:
                first_chunk = False
                last_save_time = time.time()  # compile time does not count toward the first save
            timed_out = time_is_up(run, start_time) and loop.update < config.num_updates
            if timed_out:  # the final save below, as at the end of the budget
                break
            due = (
                loop.update - last_save_update >= run.save_interval
                if run.save_interval is not None
                else time.time() - last_save_time >= run.save_interval_minutes * 60
            )
            stopping, due = agree_across_processes(stop.signal_name is not None, due)
            if due and loop.update < config.num_updates:
                save(loop, "scheduled")
                last_save_update, last_save_time = loop.update, time.time()
        if stopping:
            stop.signal_name = stop.signal_name or "a stop request on another process"
            return stop_early(loop, stop.signal_name)
        if timed_out:
            say(
                f"Time limit of {run.time_limit_minutes:g} minutes reached at update "
                f"{loop.update} of {config.num_updates}: saving (--resume continues the run)"
            )
        finish(loop)
        say(f"Training completed in {time.time() - start_time:.1f} s")
        say(f"Training complete! Total timesteps: {loop.opened.timesteps:,}")
        return 0
    finally:
        stop.restore()
        if loop.opened.logger:
            loop.opened.logger.finish()


def stop_early(loop: Loop, signal_name: str) -> int:
    """A stop request: save what the last chunk reached (no GIF or evaluation: shutting
    down promptly matters more), with interrupted_params.npz beside it."""
    from .checkpoint import save_params_npz

    if loop.update == loop.opened.start_update:
        loop.host.say("Interrupted before the first chunk finished: nothing to save")
        return 0
    save(loop, f"interrupted by {signal_name}", with_extras=False)
    if loop.host.is_main:
        path = loop.opened.run_dir / "interrupted_params.npz"
        save_params_npz(path, loop.runner.train_state.params)
    print_summary(loop)
    return 0


def finish(loop: Loop) -> None:
    """The final save, final_params.npz, the final metrics and the run summary."""
    from .checkpoint import save_params_npz

    save(loop, "final")
    logger = loop.opened.logger
    if logger is not None:  # the main process
        final = save_params_npz(
            loop.opened.run_dir / "final_params.npz", loop.runner.train_state.params
        )
        logger.upload(final, "final-model")
    policy_loss = "policy_loss" if loop.plan.config.algorithm == cfg.EXPERT_ITERATION else "pg_loss"
    loop.host.say(
        "Final metrics: "
        + ", ".join(
            f"{name}: {loop.last_metrics.get('train/' + name, float('nan')):.4f}"
            for name in ("total_loss", policy_loss, "vf_loss", "entropy", "mean_reward")
        )
    )
    print_summary(loop)


def print_summary(loop: Loop) -> None:
    # The file also holds eval/* records and, after a resume, the whole run.
    metrics_file = loop.opened.run_dir / "metrics.jsonl"
    records = (
        read_metrics_file(metrics_file)
        if loop.host.is_main and metrics_file.is_file()
        else loop.opened.history
    )
    for line in run_summary(records):
        loop.host.say(line)
