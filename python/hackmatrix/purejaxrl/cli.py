"""The training driver behind `scripts/train_purejaxrl.py` (training.md §1, §3.6, §4).

Order of work: parse and check flags, detect devices, tune and auto-scale,
print the summary, set up the run directory and logging, build and
initialise (or restore) the trainer, then loop over compiled chunks with a
log line and a checkpoint check after each one.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ..run_names import git_commit
from . import config as cfg
from . import curriculum_flags
from .checkpoint import (
    CheckpointError,
    load_checkpoint,
    next_run_name,
    prune_checkpoints,
    resolve_resume,
    restore_runner,
    save_checkpoint,
    save_params_npz,
)
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
    from .train import ent_coef_at, program_levers_at, reward_anneal_progress

    readings: dict[str, Any] = {}
    if curriculum is not None:
        readings["curriculum/probability"] = lambda u: curriculum.probability(u, config.num_updates)
    if config.reward_weights_anneal is not None:
        readings["train/reward_weights_progress"] = lambda u: reward_anneal_progress(config, u)
    if config.ent_coef_anneal is not None:
        readings["train/ent_coef"] = lambda u: ent_coef_at(config, u)
    if config.program_levers_from_update > 0:
        readings["train/program_levers"] = lambda u: program_levers_at(config, u)
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


def print_config_table(config: cfg.TrainConfig) -> None:
    rows = [
        ("num_envs", config.num_envs),
        ("num_steps", config.num_steps),
        ("total_timesteps", cfg.format_count(config.total_timesteps)),
        ("num_updates", config.num_updates),
        ("batch_size", config.batch_size),
        ("num_minibatches", config.num_minibatches),
        ("minibatch_size", config.minibatch_size),
        ("update_epochs", config.update_epochs),
        ("gradient_steps", config.gradient_steps),
        ("learning_rate", config.lr),
        ("gamma", config.gamma),
        ("gae_lambda", config.gae_lambda),
        ("clip_eps", config.clip_eps),
        ("vf_coef", config.vf_coef),
        ("value_target", config.value_target),
        ("ent_coef", config.ent_coef),
        ("ent_coef_final", "off" if config.ent_coef_final is None else config.ent_coef_final),
        ("ent_coef_anneal", "off" if config.ent_coef_anneal is None else config.ent_coef_anneal),
        ("ent_coef_programs", config.ent_coef_programs or "off"),
        ("max_grad_norm", config.max_grad_norm),
        ("hidden_dim", config.hidden_dim),
        ("num_layers", config.num_layers),
        ("log_interval (chunk)", config.log_interval),
        ("bf16", config.bf16),
        ("seed", config.seed),
        ("network", config.network),
        ("reward_weights", cfg.format_reward_weights(config.reward_weights)),
        ("reward_weights_anneal", config.reward_weights_anneal),
        ("reward_weights_final", cfg.format_reward_weights(config.reward_weights_final)),
        ("program_bonus", config.program_bonus),
        ("program_bonus_scale", config.program_bonus_scale),
        ("program_bonus_at_death", config.program_bonus_at_death),
        ("program_use_bonus", config.program_use_bonus),
        ("free_program_spending", config.free_program_spending),
        ("siphon_pay_on_use", config.siphon_pay_on_use),
        ("program_levers_from", config.program_levers_from_update or "start"),
        ("distance_shaping", config.distance_shaping),
        ("max_episode_steps", config.max_episode_steps or "off"),
    ]
    lines = [f" {name:<22} {value!s:>14} " for name, value in rows]
    width = max(len(line) for line in lines)
    print("+" + "-" * width + "+")
    print("|" + " Configuration".ljust(width) + "|")
    print("+" + "-" * width + "+")
    for line in lines:
        print("|" + line.ljust(width) + "|")
    print("+" + "-" * width + "+")


def load_env(module_name: str) -> ModuleType:
    import importlib

    return importlib.import_module(module_name)


def main(argv: Sequence[str] | None = None, env: ModuleType | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = cfg.build_parser().parse_args(argv)
    explicit = cfg.explicit_flags(argv)
    try:
        return _train(args, explicit, env)
    except (ValueError, CheckpointError, FileExistsError) as error:
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


NETWORK_FIELDS = ("network", "hidden_dim", "num_layers")
# What the value head's output means (training.md §2.6): kept on resume like the network.
VALUE_FIELDS = ("value_target",)


def take_from_checkpoint(config: Any, stored: dict, explicit: set[str], fields) -> dict:
    """Set each of `fields` not given on the command line to the checkpoint's value where
    they differ; returns what was taken over ({name: value})."""
    taken = {
        name: stored[name]
        for name in fields
        if name not in explicit and name in stored and getattr(config, name) != stored[name]
    }
    for name, value in taken.items():
        setattr(config, name, value)
    return taken


def inherit_network_from_checkpoint(config: Any, stored: dict, explicit: set[str]) -> str | None:
    """On resume, keep the checkpoint's network, hidden dim, layer count and value target
    unless flagged.

    Each not given on the command line is taken from the checkpoint; a given one is
    kept. A network that does not match then stops the run with a clear error (below);
    a new value target is allowed, with a note (the head relearns its scale).
    Returns a line to print when something was taken over, else None.
    """
    # Checkpoints from before --network are mlp, from before --value-target raw.
    stored = {"network": "mlp", "value_target": "raw", **stored}
    taken = take_from_checkpoint(config, stored, explicit, NETWORK_FIELDS + VALUE_FIELDS)
    if not taken:
        return None
    return "Network: continuing the checkpoint's " + ", ".join(
        f"{name}={value}" for name, value in taken.items()
    )


# What PPO is paid besides the env's reward (training.md §1.1), and the program-choice
# entropy term: a program lever, held back by the delay stored beside it.
REWARD_FIELDS = (
    "reward_weights",
    "reward_weights_anneal",
    "reward_weights_final",
    "program_bonus",
    "program_bonus_scale",
    "program_bonus_at_death",
    "program_use_bonus",
    "free_program_spending",
    "siphon_pay_on_use",
    "ent_coef_programs",
    "program_levers_from_update",
    "distance_shaping",
)


def inherit_rewards_from_checkpoint(config: Any, stored: dict, explicit: set[str]) -> str | None:
    """On resume, keep the checkpoint's reward options unless flagged.

    Each option not given on the command line is taken from the checkpoint (a
    staged run resumed without its flags keeps being paid as before); a given one
    changes it, and the change is printed below. Returns a line to print when
    something was taken over, else None.
    """
    taken = take_from_checkpoint(config, stored, explicit, REWARD_FIELDS)
    if not taken:
        return None
    weight_maps = ("reward_weights", "reward_weights_final")

    def shown(name, value):
        return cfg.format_reward_weights(value) if name in weight_maps else value

    return "Reward: continuing the checkpoint's " + ", ".join(
        f"{name}={shown(name, value)}" for name, value in taken.items()
    )


def _train(args, explicit, env) -> int:
    if args.rewind and args.resume is None and args.resume_run is None:
        raise ValueError("--rewind only makes sense together with --resume")
    config = cfg.config_from_args(args)
    checkpoint_dir = Path(args.checkpoint_dir)
    resume_path = resolve_resume(args.resume, args.resume_run, checkpoint_dir, cfg.RESUME_LATEST)
    payload = load_checkpoint(resume_path) if resume_path else None
    # Before the checks: a flag given on resume may need an option the checkpoint holds
    # (e.g. a new --program-levers-from-update for its program bonus).
    reward_note = (
        inherit_rewards_from_checkpoint(config, payload["config"], explicit)
        if payload is not None
        else None
    )
    cfg.validate(config)

    if args.multi_host or any(
        value is not None
        for value in (args.coordinator_address, args.num_processes, args.process_id)
    ):
        initialize_multi_host(
            args.coordinator_address, args.num_processes, args.process_id, args.distributed_timeout
        )
    cache_dir = enable_compilation_cache()
    import jax

    from .train import make_mesh, make_train, place_runner_state

    # Loaded here so a bad --reward-weights name fails before a run directory exists.
    env = env if env is not None else load_env(args.env_module)
    cfg.check_reward_weight_names(config.reward_weights, env.REWARD_COMPONENT_NAMES)
    cfg.check_reward_weight_names(
        config.reward_weights_final, env.REWARD_COMPONENT_NAMES, "--reward-weights-final"
    )
    # Curriculum starts (§1.7): a resume without --curriculum* flags continues the
    # checkpoint's schedule.
    curriculum_note = (
        curriculum_flags.inherit_from_checkpoint(config, payload["config"], explicit)
        if payload is not None
        else None
    )
    network_note = (
        inherit_network_from_checkpoint(config, payload["config"], explicit)
        if payload is not None
        else None
    )
    curriculum = curriculum_flags.resolve(config)
    if curriculum is not None:
        curriculum_flags.env_params_for(
            env, curriculum, curriculum.p0
        )  # the game's own checks, before compiling

    def env_params_at(update: int) -> Any:
        return curriculum_env_params(config, env, curriculum, update)

    def chunk_length(update: int) -> int:
        """Updates in the chunk starting at `update`: `--log-interval`, cut short at the
        end of the run (a schedule switching inside a chunk switches on its own update)."""
        return min(config.log_interval, config.num_updates - update)

    devices = describe_devices()
    is_main = devices["process_index"] == 0
    say = print if is_main else (lambda *a, **k: None)
    say(f"Device: {devices['device_type']} ({devices['device_kind']})")
    say(
        f"Device count: {devices['device_count']}"
        + (f" over {devices['process_count']} hosts" if devices["process_count"] > 1 else "")
    )
    say(f"Backend: {devices['backend']}")
    software = describe_software()
    say(
        "Software: "
        + ", ".join(f"{name} {software[name]}" for name in ("python", *PROVENANCE_PACKAGES))
        + f"; CPU: {software['cpu']}"
    )
    say(f"Compilation cache: {cache_dir}")

    if args.auto_tune:
        for change in cfg.apply_device_tuning(
            config, devices["device_type"], devices["device_count"], explicit
        ):
            say(f"Auto-tune: {change}")
    budget_warning = cfg.enforce_minimum_budget(config)
    report = cfg.auto_scale_for_batch_size(config)
    cfg.validate(config)
    if budget_warning:
        say(f"WARNING: {budget_warning}")
    print_autoscale(report, config.lr) if is_main else None
    print_config_table(config) if is_main else None
    if network_note:
        say(network_note)
    if reward_note:
        say(reward_note)
    if curriculum_note:
        say(curriculum_note)
    for levers_note in (cfg.program_levers_note(config), cfg.program_levers_batch_note(config)):
        if levers_note:
            say(levers_note)
    say(
        f"Curriculum: {curriculum.describe()}"
        if curriculum
        else "Curriculum: none (canonical starts)"
    )

    # ------------------------------------------------------------ run identity
    start_update, last_logged, timesteps, history = 0, -1, 0, []
    if payload is not None:
        assert resume_path is not None  # the payload was read from it
        run_dir = resume_path.parent
        run_name = run_dir.name
        start_update = payload["step"]
        last_logged = payload["last_logged_step"]
        timesteps = payload.get("timesteps", start_update * config.batch_size)
        history = list(payload.get("metrics_history", []))
        stored = payload["config"]
        if (stored.get("num_envs"), stored.get("num_steps")) != (config.num_envs, config.num_steps):
            say(
                "WARNING: batch shape changed from "
                f"{stored.get('num_envs')}x{stored.get('num_steps')} "
                f"to {config.num_envs}x{config.num_steps}; "
                "Adam moments were tuned to the old batch "
                f"(consider --reset-optimizer or a fresh run)"
            )
        if stored.get("reward_weights") != config.reward_weights:
            say(
                "Note: reward weights change from "
                f"{cfg.format_reward_weights(stored.get('reward_weights'))} "
                f"to {cfg.format_reward_weights(config.reward_weights)}"
            )
        if stored.get("reward_weights_final") != config.reward_weights_final:
            say(
                "Note: final reward weights change from "
                f"{cfg.format_reward_weights(stored.get('reward_weights_final'))} "
                f"to {cfg.format_reward_weights(config.reward_weights_final)}"
            )
        # (key, label, the value a checkpoint from before the flag existed stands for)
        for key, label, before_the_flag in (
            ("value_target", "value target (the head relearns its scale)", "raw"),
            ("vf_coef", "value-loss coefficient", 0.5),
            ("ent_coef", "entropy coefficient", 0.15),
            ("ent_coef_final", "final entropy coefficient", None),
            ("ent_coef_anneal", "entropy coefficient anneal", None),
            ("ent_coef_programs", "program-choice entropy coefficient", 0.0),
            ("program_bonus", "program bonus", 0),
            ("program_bonus_scale", "program bonus scale", "flat"),
            ("program_bonus_at_death", "program bonus at death", "pay"),
            ("program_use_bonus", "program use bonus", 0),
            ("free_program_spending", "free program spending", 0),
            ("siphon_pay_on_use", "siphon pay on use", False),
            ("program_levers_from_update", "program levers' first update", 0),
            ("max_episode_steps", "episode step limit", 0),
        ):
            was = stored.get(key, before_the_flag)
            if was != getattr(config, key):
                say(f"Note: {label} changes from {was} to {getattr(config, key)}")
        stored = {"network": "mlp", **stored}  # checkpoints from before --network are mlp
        for key in ("hidden_dim", "num_layers", "network"):
            if stored.get(key) != getattr(config, key):
                raise CheckpointError(
                    f"checkpoint {resume_path}: trained with {key}={stored.get(key)}, "
                    f"but this run asks for {getattr(config, key)}"
                )
        changed = provenance_changes(stored.get("provenance"), software)
        if changed:
            say(
                "Note: the checkpoint was trained with other software or hardware ("
                + "; ".join(changed)
                + "): the run goes on, but not bit for bit as it would have there"
            )
        say(f"Resuming run {run_name} from {resume_path.name} (update {start_update})")
    else:
        run_name = args.run_name or next_run_name(checkpoint_dir, args.run_suffix)
        if args.run_name and args.run_suffix:
            run_name = f"{run_name}-{args.run_suffix}"
        run_dir = checkpoint_dir / run_name
        if run_dir.exists() and any(run_dir.iterdir()):
            raise FileExistsError(
                f"run directory {run_dir} already exists and is not empty; "
                f"use --resume {run_dir} to continue it or pick another --run-name"
            )
        say(f"Run name: {run_name}")
    remaining = config.num_updates - start_update
    if payload is not None:
        say(f"Updates: {start_update} done, {max(remaining, 0)} remaining of {config.num_updates}")
    if remaining <= 0:
        say(
            "Nothing left to train: the checkpoint already reached --total-timesteps "
            "(give a larger total to extend the run)"
        )
        return 0
    sync_processes(
        "run directory checked"
    )  # before process 0 creates it, or the others would refuse it
    if is_main:
        run_dir.mkdir(parents=True, exist_ok=True)

    wandb_config = {
        **config.to_dict(),
        "batch_size": config.batch_size,
        "minibatch_size": config.minibatch_size,
        "num_updates": config.num_updates,
        "gradient_steps": config.gradient_steps,
        "device_type": devices["device_type"],
        "device_count": devices["device_count"],
        "backend": devices["backend"],
        "provenance": software,
        "git_commit": git_commit(),
    }
    logger = None
    if is_main and payload is not None:
        moved = set_aside_records_after(run_dir / "metrics.jsonl", start_update)
        if moved:
            say(
                f"metrics.jsonl: {moved} records logged after update {start_update} belong to a "
                f"branch this checkpoint does not continue; moved to {SUPERSEDED_METRICS}"
            )
    if is_main:
        logger = MetricsLogger(
            run_dir,
            not args.no_wandb,
            project=args.project,
            entity=args.entity,
            run_name=run_name,
            config=wandb_config,
            skip_through=-1 if args.rewind else last_logged,
            rewind_to=last_logged if (args.rewind and payload is not None) else None,
            upload_artifacts=not args.no_artifact,
        )
        say(f"W&B: {logger.url or ('off' if args.no_wandb else 'offline / unavailable')}")
    period = (
        f"{args.save_interval} updates"
        if args.save_interval is not None
        else f"{args.save_interval_minutes:g} minutes"
    )
    kept = f", keeping the newest {args.keep_checkpoints}" if args.keep_checkpoints else ""
    say(f"Checkpoints: every {period} -> {run_dir}{kept}")

    # ---------------------------------------------------------- build and init
    env = env if env is not None else load_env(args.env_module)
    mesh = make_mesh(jax.devices())
    trainer = make_train(config, env, env_params_at(start_update), mesh=mesh)
    if is_main:
        from .network import describe_network

        say(describe_network(trainer.network))
    episode_gif = None
    if is_main and not args.no_episode_gif:
        from ..analysis.episode_gif import EpisodeGif

        episode_gif = EpisodeGif(env, trainer.network, run_dir, seed=config.seed, say=say)
    checkpoint_eval = None
    if is_main and args.eval_episodes > 0:
        from ..analysis.checkpoint_eval import CheckpointEvaluation

        checkpoint_eval = CheckpointEvaluation(
            env, trainer.network, episodes=args.eval_episodes, mode=args.eval_policy, say=say
        )
    runner = trainer.init(jax.random.PRNGKey(config.seed))
    if payload is not None:
        assert resume_path is not None  # the payload was read from it
        runner, env_restored = restore_runner(
            resume_path, payload, to_host(runner), reset_optimizer=args.reset_optimizer
        )
        runner = place_runner_state(trainer, runner)
        say(
            "Restored params"
            + ("" if args.reset_optimizer else ", Adam state")
            + ", RNG key"
            + (" and the env batch" if env_restored else "; environments start fresh")
        )

    full_config = {**config.to_dict(), "run_name": run_name, "provenance": software}
    stop = StopRequest()
    stop.install()
    update = start_update
    last_metrics: dict = payload["metrics"] if payload else {}
    last_save_update, last_save_time = update, time.time()  # reset after the first chunk

    def save(reason: str, with_extras: bool = True):
        """Checkpoint files, then (if `with_extras`) the episode GIF and the eval/* games."""
        host_runner = to_host(runner)  # on every process: the env batch is gathered from all
        if logger is None:  # only the main process writes files
            return
        pkl, npz = save_checkpoint(
            run_dir,
            update,
            host_runner,
            full_config,
            metrics=last_metrics,
            metrics_history=history,
            last_logged_step=last_logged,
            timesteps=timesteps,
        )
        say(f"Saved {pkl.name} and {npz.name} ({reason})")
        logger.upload(pkl, f"checkpoint-{update}")
        removed = prune_checkpoints(run_dir, args.keep_checkpoints)
        if removed:
            say(f"Removed {', '.join(path.name for path in removed)} (--keep-checkpoints)")
        if episode_gif is not None and with_extras:
            gif = episode_gif.record(update, host_runner.train_state.params, logger)
            if gif is not None:
                say(f"Saved {gif.name}")
        if checkpoint_eval is not None and with_extras:
            eval_metrics = checkpoint_eval.run(update, host_runner.train_state.params)
            if eval_metrics is not None:
                logger.log(update, eval_metrics)

    def print_summary():
        # The file also holds eval/* records and, after a resume, the whole run.
        metrics_file = run_dir / "metrics.jsonl"
        records = read_metrics_file(metrics_file) if is_main and metrics_file.is_file() else history
        for line in run_summary(records):
            say(line)

    say(
        "Compiling the training chunk (first call; can take minutes on an accelerator)...",
        flush=True,
    )
    start_time = time.time()
    progress = Progress(config.num_updates, start_update)
    health = HealthMonitor()
    health.prime(history)  # a resume continues the windows of the oscillation checks
    first_chunk = True
    warnings.filterwarnings("ignore", message="Some donated buffers were not usable")
    # Every process stops at the same chunk (see agree_across_processes).
    stopping, _ = agree_across_processes(stop.signal_name is not None, False)
    try:
        while update < config.num_updates and not stopping:
            active = chunk_length(update)
            chunk_start = time.time()
            inputs = trainer.chunk_inputs(update)
            runner, per_update = trainer.train_chunk(runner, active, inputs)
            per_update = to_host(per_update)
            seconds = time.time() - chunk_start
            update += active
            timesteps += active * config.batch_size
            metrics = aggregate_chunk(per_update, active)
            metrics.update(schedule_metrics(config, curriculum, range(update - active, update)))
            rate = active / seconds
            metrics = add_progress(
                metrics, update, timesteps, rate, active * config.batch_size / seconds, first_chunk
            )
            health_warnings = health.observe(update, metrics)
            metrics["health/active_warnings"] = float(len(health.active))
            last_metrics = metrics
            history.append({"update": update, **metrics})
            elapsed, eta = progress.tick(update)
            say(chunk_line(update, config.num_updates, elapsed, eta, metrics), flush=True)
            if args.console == "full":
                say(grouped_table(metrics), flush=True)
            for warning in health_warnings:
                say(warning_line(warning), flush=True)
            if logger:
                notes = (
                    {"health/warnings": [w.to_json() for w in health_warnings]}
                    if health_warnings
                    else None
                )
                logger.log(update, metrics, notes)
                for warning in health_warnings:
                    logger.alert(f"HackMatrix {run_name}: {warning.check}", warning.text())
            last_logged = update
            if first_chunk:
                first_chunk = False
                last_save_time = time.time()  # compile time does not count toward the first save
            due = (
                update - last_save_update >= args.save_interval
                if args.save_interval is not None
                else time.time() - last_save_time >= args.save_interval_minutes * 60
            )
            stopping, due = agree_across_processes(stop.signal_name is not None, due)
            if due and update < config.num_updates:
                save("scheduled")
                last_save_update, last_save_time = update, time.time()

        if stopping:
            stop.signal_name = stop.signal_name or "a stop request on another process"
            if update == start_update:
                say("Interrupted before the first chunk finished: nothing to save")
            else:
                # No GIF or evaluation here: shutting down promptly matters more.
                save(f"interrupted by {stop.signal_name}", with_extras=False)
                if is_main:
                    save_params_npz(run_dir / "interrupted_params.npz", runner.train_state.params)
                print_summary()
            return 0

        save("final")
        if logger is not None:  # the main process
            final = save_params_npz(run_dir / "final_params.npz", runner.train_state.params)
            logger.upload(final, "final-model")
        say(
            "Final metrics: "
            + ", ".join(
                f"{name}: {last_metrics.get('train/' + name, float('nan')):.4f}"
                for name in ("total_loss", "pg_loss", "vf_loss", "entropy", "mean_reward")
            )
        )
        print_summary()
        say(f"Training completed in {time.time() - start_time:.1f} s")
        say(f"Training complete! Total timesteps: {timesteps:,}")
        return 0
    finally:
        stop.restore()
        if logger:
            logger.finish()
