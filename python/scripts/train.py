#!/usr/bin/env python3
"""Legacy SB3 trainer: MaskablePPO on the Swift engine through HackMatrix-v0.

For reward and observation debugging (training.md §6); the fast trainer is
train_purejaxrl.py. Flags follow training.md §6.1, the PPO settings §6.2,
callbacks and outputs §6.4.

    python python/scripts/train.py --timesteps 100000 --num-envs 4
    python python/scripts/train.py --timesteps 200000 \
        --resume models/<run>/maskable_ppo_hack_50000_steps.zip

Each run lives in <model-dir>/<run_name>/ (checkpoints, best_model.zip,
final/interrupted/crash-recovery models, config.json) and logs to
<log-dir>/<run_name>/ (evaluations, Swift stderr per env, TensorBoard when
installed). --timesteps is the run's total: a resume trains the remainder.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import json
import os
import signal
import sqlite3
import sys
from pathlib import Path

import numpy as np

from hackmatrix.names import REWARD_COMPONENT_NAMES
from hackmatrix.run_names import git_commit, next_run_name, wandb_run_id
from hackmatrix.swift_bridge.binary import find_binary
from hackmatrix.swift_bridge.client import EngineError

CHECKPOINT_PREFIX = "maskable_ppo_hack"
PPO_KEYS = (
    "learning_rate",
    "n_steps",
    "batch_size",
    "n_epochs",
    "gamma",
    "gae_lambda",
    "clip_range",
    "ent_coef",
    "vf_coef",
)
NET_ARCH = {"pi": [256, 256, 128], "vf": [256, 256, 128]}
# Test hook: SIGKILL env 0's Swift engine once this many timesteps have run (training.md §6.3).
KILL_ENGINE_ENV = "HACKMATRIX_TEST_KILL_ENGINE_AT"

# training.md §6.2: the seed table is the default; where it is silent, the original's values.
PRESETS = {
    "seed": {
        "learning_rate": 3e-4,
        "n_steps": 2048,
        "batch_size": 64,
        "n_epochs": 10,
        "gamma": 0.99,
        "gae_lambda": 0.95,
        "clip_range": 0.2,
        "ent_coef": 0.1,
        "vf_coef": 1.0,
    },
    # The original's "production" MODEL_CONFIG.
    "original": {
        "learning_rate": 3e-4,
        "n_steps": 4096,
        "batch_size": 64,
        "n_epochs": 20,
        "gamma": 0.99,
        "gae_lambda": 0.95,
        "clip_range": 0.2,
        "ent_coef": 0.3,
        "vf_coef": 1.0,
    },
}


# --------------------------------------------------------------------------- arguments


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="MaskablePPO on the Swift HackMatrix engine (legacy SB3 path)."
    )
    p.add_argument("--timesteps", type=int, default=1_000_000, help="total env steps of the run")
    p.add_argument("--save-freq", type=int, default=10_000, help="checkpoint every N env steps")
    p.add_argument("--eval-freq", type=int, default=5_000, help="evaluate every N env steps")
    p.add_argument("--eval-episodes", type=int, default=5)
    p.add_argument("--log-dir", type=Path, default=Path("./logs"))
    p.add_argument("--model-dir", type=Path, default=Path("./models"))
    p.add_argument(
        "--resume", type=Path, default=None, help="model .zip to continue; its folder is the run"
    )
    p.add_argument("--run-suffix", default=None)
    p.add_argument("--num-envs", type=int, default=1, help="1: DummyVecEnv; more: SubprocVecEnv")
    p.add_argument("--max-episode-steps", type=int, default=1000, help="TimeLimit truncation")
    p.add_argument("--no-wandb", action="store_true", help="turn W&B off")
    p.add_argument(
        "--wandb", action="store_true", help="accepted for compatibility (W&B is on by default)"
    )
    verbosity = p.add_mutually_exclusive_group()
    verbosity.add_argument(
        "--debug", action="store_true", help="Swift debug logs (to the per-env log file)"
    )
    verbosity.add_argument(
        "--info", action="store_true", help="Swift info logs (to the per-env log file)"
    )
    p.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default=None,
        help="hyperparameter preset (default: seed; 'original' = the original production config)",
    )
    for key in PPO_KEYS:
        kind = int if key in ("n_steps", "batch_size", "n_epochs") else float
        p.add_argument(
            "--" + key.replace("_", "-"),
            type=kind,
            default=None,
            dest=key,
            help=f"override {key} (seed preset: {PRESETS['seed'][key]})",
        )
    p.add_argument("--seed", type=int, default=None, help="seed for the policy and the env seeds")
    p.add_argument("--device", default="cpu", help="torch device (an MLP policy runs best on cpu)")
    p.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="torch CPU threads "
        "(1 is fastest for this small MLP; more threads spin-wait on busy CPUs)",
    )
    p.add_argument(
        "--binary",
        default=None,
        help="Swift CLI (default: $HACKMATRIX_BINARY or ./swift-build output)",
    )
    p.add_argument("--no-progress-bar", action="store_true")
    args = p.parse_args(argv)
    for name in (
        "timesteps",
        "save_freq",
        "eval_freq",
        "num_envs",
        "max_episode_steps",
        "eval_episodes",
        "torch_threads",
    ):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def requested_hyperparameters(args) -> dict:
    """The preset (default 'seed') with explicit flags applied on top."""
    config = dict(PRESETS[args.preset or "seed"])
    config.update({k: getattr(args, k) for k in PPO_KEYS if getattr(args, k) is not None})
    return config


def explicit_hyperparameters(args) -> dict:
    """Only what the user asked for on this command line.

    A preset counts as asking for all its values.
    """
    config = dict(PRESETS[args.preset]) if args.preset else {}
    config.update({k: getattr(args, k) for k in PPO_KEYS if getattr(args, k) is not None})
    return config


# --------------------------------------------------------------------------- run identity


def binary_facts(binary: Path) -> dict:
    """Path, SHA-256 and build time of the binary actually launched (training.md §6.4)."""
    digest = hashlib.sha256(binary.read_bytes()).hexdigest()
    built = datetime.datetime.fromtimestamp(
        binary.stat().st_mtime, datetime.timezone.utc
    ).isoformat()
    return {"swift_binary": str(binary), "swift_binary_sha256": digest, "swift_binary_built": built}


# --------------------------------------------------------------------------- environments


def make_env_fn(
    binary: str, max_episode_steps: int, log_level: str | None, stderr_log: Path | None
):
    """A picklable factory for one HackMatrix-v0 env: crash-to-truncation, TimeLimit, then Monitor.

    A dead Swift process ends its episode as truncated and the auto-reset
    starts a fresh one, so one crash does not end the run (§6.3).
    """

    def make():
        from gymnasium.wrappers import TimeLimit
        from stable_baselines3.common.monitor import Monitor

        from hackmatrix.swift_bridge.gym_env import HackMatrixEnv, TruncateOnEngineCrash

        env = HackMatrixEnv(
            binary=binary, log_level=log_level, stderr_log=str(stderr_log) if stderr_log else None
        )
        return Monitor(TimeLimit(TruncateOnEngineCrash(env), max_episode_steps=max_episode_steps))

    return make


def make_vec_env(args, binary: Path, log_dir: Path, count: int, tag: str):
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    level = "debug" if args.debug else ("info" if args.info else None)
    fns = [
        make_env_fn(str(binary), args.max_episode_steps, level, log_dir / f"swift_{tag}{i}.log")
        for i in range(count)
    ]
    return DummyVecEnv(fns) if count == 1 else SubprocVecEnv(fns)


def close_quietly(vec_env) -> None:
    if vec_env is None:
        return
    with contextlib.suppress(BrokenPipeError, EOFError, ConnectionError, OSError, EngineError):
        vec_env.close()


# --------------------------------------------------------------------------- callbacks


def make_callbacks(base):
    """Callback classes, built on SB3's BaseCallback (imported lazily so --help stays fast)."""

    class RewardComponentsCallback(base):
        """Logs reward/<key>: each of the 15 components' mean per env step (§3.3).

        The mean is over the rollout.
        """

        def __init__(self, wandb_run=None):
            super().__init__()
            self.wandb_run = wandb_run
            self._sums = np.zeros(len(REWARD_COMPONENT_NAMES))
            self._steps = 0
            self._actions = np.zeros(3)

        def _on_rollout_start(self) -> None:
            self._sums[:] = 0.0
            self._steps = 0
            self._actions[:] = 0

        def _on_step(self) -> bool:
            for info, action in zip(
                self.locals["infos"], np.asarray(self.locals["actions"]).reshape(-1)
            ):
                components = info.get("reward_components", {})
                self._sums += [components.get(k, 0.0) for k in REWARD_COMPONENT_NAMES]
                self._steps += 1
                self._actions[0 if action < 4 else (1 if action == 4 else 2)] += 1
            return True

        def _on_rollout_end(self) -> None:
            if self._steps == 0:
                return
            means = self._sums / self._steps
            metrics = {f"reward/{k}": float(v) for k, v in zip(REWARD_COMPONENT_NAMES, means)}
            metrics["train/mean_reward"] = float(means.sum())
            for name, count in zip(("move", "siphon", "program"), self._actions):
                metrics[f"actions/{name}_frac"] = float(count / self._steps)
            for key, value in metrics.items():
                self.logger.record(key, value)
            if self.wandb_run is not None:
                self.wandb_run.log(metrics, step=self.num_timesteps)

    class EpisodeStatsCallback(base):
        """Each finished episode's stats to W&B (episode/*) and to training_history.db (§6.4)."""

        def __init__(self, db_path: Path, run_id: str, wandb_run=None):
            super().__init__()
            self.db_path = db_path
            self.run_id = run_id
            self.wandb_run = wandb_run
            self.count = 0
            self._db = None

        def _on_training_start(self) -> None:
            self._db = sqlite3.connect(self.db_path)
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS episodes ("
                "id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT, "
                "timesteps INTEGER, total_reward REAL, steps INTEGER, highest_stage INTEGER, "
                "programs_used INTEGER, stats_json TEXT)"
            )
            self._db.execute("CREATE INDEX IF NOT EXISTS episodes_run ON episodes(run_id)")

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                stats = info.get("episode_stats")
                if stats is not None:
                    self._record(stats)
            return True

        def _record(self, stats: dict) -> None:
            self.count += 1
            self._db.execute(
                "INSERT INTO episodes (run_id, timestamp, timesteps, total_reward, steps, "
                "highest_stage, programs_used, stats_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.run_id,
                    datetime.datetime.now(datetime.timezone.utc).isoformat(),
                    self.num_timesteps,
                    stats["total_reward"],
                    stats["steps"],
                    stats["highest_stage"],
                    stats["programs_used"],
                    json.dumps(stats),
                ),
            )
            self._db.commit()
            if self.wandb_run is None:
                return
            point = {
                "episode/count": self.count,
                "episode/programs_used": stats["programs_used"],
                "episode/highest_stage": stats["highest_stage"],
                "episode/steps": stats["steps"],
                "episode/action_moves": stats["action_counts"]["move"],
                "episode/action_siphons": stats["action_counts"]["siphon"],
                "episode/action_programs": stats["action_counts"]["program"],
            }
            for key, value in stats["reward_breakdown"].items():
                point[f"episode/reward_{key}"] = value
            point["episode/reward_stepPenalty"] = stats["reward_components"].get(
                "step_penalty", 0.0
            )
            self.wandb_run.log(point, step=self.num_timesteps)

        def _on_training_end(self) -> None:
            if self._db is not None:
                self._db.close()
                self._db = None

    return RewardComponentsCallback, EpisodeStatsCallback


# --------------------------------------------------------------------------- W&B


def make_engine_crash_callback(base):
    class EngineCrashCallback(base):
        """Reports each engine crash (the env restarts it on its reset); logs env/engine_crashes.

        `kill_at` is the test hook of KILL_ENGINE_ENV: a real SIGKILL of env 0's engine.
        """

        def __init__(self, kill_at: int | None = None):
            super().__init__()
            self.crashes = 0
            self.kill_at = kill_at

        def _on_step(self) -> bool:
            if self.kill_at is not None and self.num_timesteps >= self.kill_at:
                pid = self.training_env.get_attr("engine_pid", indices=[0])[0]
                print(
                    f"{KILL_ENGINE_ENV}: killing env 0's Swift engine (pid {pid}) at timestep "
                    f"{self.num_timesteps}",
                    flush=True,
                )
                os.kill(pid, signal.SIGKILL)
                self.kill_at = None
            for index, info in enumerate(self.locals["infos"]):
                if "engine_crashed" in info:
                    self.crashes += 1
                    first_line = info["engine_crashed"].splitlines()[0]
                    print(
                        f"Engine crash in env {index} at timestep {self.num_timesteps}: "
                        f"{first_line}; episode truncated, a fresh engine starts on its reset "
                        f"(crashes so far: {self.crashes})",
                        flush=True,
                    )
                    self.logger.record("env/engine_crashes", self.crashes)
            return True

    return EngineCrashCallback


def start_wandb(run_name: str, run_dir: Path, config: dict):
    """wandb.init per training.md §6.4, offline without credentials.

    None (with a warning) on any failure.
    """
    try:
        import wandb
    except ImportError:
        print("WARNING: wandb is not installed; continuing without it")
        return None
    if not os.environ.get("WANDB_API_KEY") and os.environ.get("WANDB_MODE") is None:
        try:
            logged_in = bool(wandb.api.api_key)
        except Exception:
            logged_in = False
        if not logged_in:
            os.environ["WANDB_MODE"] = "offline"
            print("W&B: no credentials found, logging offline (sync later with `wandb sync`)")
    try:
        return wandb.init(
            project="hackmatrix",
            name=run_name,
            id=wandb_run_id(run_name),
            resume="allow",
            save_code=True,
            sync_tensorboard=True,
            config=config,
            dir=str(run_dir),
        )
    except Exception as error:
        print(f"WARNING: wandb.init failed ({error}); continuing without it")
        return None


# --------------------------------------------------------------------------- main


def resolve_run(args) -> tuple[str, Path]:
    if args.resume is not None:
        if not args.resume.is_file():
            raise SystemExit(f"--resume: {args.resume} is not a file")
        run_dir = args.resume.resolve().parent
        return run_dir.name, run_dir
    run_name = next_run_name(args.model_dir, args.run_suffix)
    run_dir = args.model_dir / run_name
    if run_dir.exists() and any(run_dir.iterdir()):
        raise SystemExit(f"refusing to write into the existing non-empty run directory {run_dir}")
    return run_name, run_dir


def current_hyperparameters(model) -> dict:
    values = {k: getattr(model, k) for k in PPO_KEYS}
    values["clip_range"] = float(model.clip_range(1.0))  # stored as a schedule
    values["learning_rate"] = float(model.lr_schedule(1.0))
    return values


def local_logger(log_dir):
    """SB3's console table plus progress.csv in the run's log folder (without TensorBoard).

    Left to itself, SB3 would then configure its logger with no folder and
    leave an empty /tmp/SB3-<time> folder behind on every run.
    """
    from stable_baselines3.common.logger import configure

    return configure(str(log_dir), ["stdout", "csv"])


def load_for_resume(args, vec_env, tensorboard_log):
    """Load the model; keep its stored hyperparameters unless a flag asks otherwise, and say so."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(
        args.resume, env=vec_env, device=args.device, tensorboard_log=tensorboard_log
    )
    stored = current_hyperparameters(model)
    print("Resumed hyperparameters: " + ", ".join(f"{k}={v}" for k, v in stored.items()))
    changes = {k: v for k, v in explicit_hyperparameters(args).items() if v != stored[k]}
    if "n_steps" in changes or "batch_size" in changes:
        raise SystemExit(
            "--n-steps/--batch-size cannot change on --resume (the rollout buffer shape is fixed); "
            "start a fresh run instead"
        )
    for key, value in changes.items():
        print(
            f"WARNING: --resume changes {key}: {stored[key]} -> {value} "
            "(asked for on the command line)"
        )
        if key == "learning_rate":
            from stable_baselines3.common.utils import get_schedule_fn

            model.learning_rate = value
            model.lr_schedule = get_schedule_fn(value)
        elif key == "clip_range":
            from stable_baselines3.common.utils import get_schedule_fn

            model.clip_range = get_schedule_fn(value)
        else:
            setattr(model, key, value)
    if model.n_envs != vec_env.num_envs:
        print(f"WARNING: the model was trained with {model.n_envs} envs, now {vec_env.num_envs}")
    return model


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    torch.set_num_threads(args.torch_threads)
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList, CheckpointCallback

    binary = Path(args.binary).resolve() if args.binary else find_binary()
    run_name, run_dir = resolve_run(args)
    log_dir = args.log_dir / run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    args.model_dir.mkdir(parents=True, exist_ok=True)

    try:
        import tensorboard  # noqa: F401

        tensorboard_log = str(args.log_dir)
    except ImportError:
        tensorboard_log = None
        print("note: tensorboard is not installed; TensorBoard logs are off")

    vec_env = eval_env = model = wandb_run = None
    interrupted = {"signal": None}

    def on_sigterm(signum, frame):  # treat `kill` like Ctrl+C: save, then stop
        interrupted["signal"] = signum
        raise KeyboardInterrupt

    previous_sigterm = signal.signal(signal.SIGTERM, on_sigterm)
    status = 0
    try:
        vec_env = make_vec_env(args, binary, log_dir, args.num_envs, "env")
        if args.seed is not None:
            vec_env.seed(args.seed)
        eval_env = make_vec_env(args, binary, log_dir, 1, "eval")
        if args.resume is not None:
            model = load_for_resume(args, vec_env, tensorboard_log)
        else:
            hyper = requested_hyperparameters(args)
            model = MaskablePPO(
                "MultiInputPolicy",
                vec_env,
                policy_kwargs={"net_arch": NET_ARCH},
                tensorboard_log=tensorboard_log,
                seed=args.seed,
                device=args.device,
                verbose=1,
                **hyper,
            )
        if tensorboard_log is None:
            model.set_logger(local_logger(log_dir))
        remaining = args.timesteps - model.num_timesteps
        engine_hello = vec_env.get_attr("engine_info", indices=[0])[0]
        hyper_now = current_hyperparameters(model)
        config = {
            "run_name": run_name,
            "model_config": {**hyper_now, "net_arch": NET_ARCH, "policy": "MultiInputPolicy"},
            "num_envs": args.num_envs,
            "max_episode_steps": args.max_episode_steps,
            "total_timesteps": args.timesteps,
            "resumed_from": str(args.resume) if args.resume else None,
            "reward_components": list(REWARD_COMPONENT_NAMES),
            "git_commit": git_commit(),
            "engine": {
                k: engine_hello.get(k) for k in ("engine", "engineVersion", "protocolVersion")
            },
            **binary_facts(binary),
        }
        (run_dir / "config.json").write_text(json.dumps(config, indent=2, default=str))
        print(f"Run {run_name}: models in {run_dir}, logs in {log_dir}")
        if remaining <= 0:
            print(
                f"The run already has {model.num_timesteps} of {args.timesteps} timesteps; "
                "nothing to do (give a larger --timesteps to extend it)."
            )
            return 0
        print(
            f"Training {remaining} timesteps ({model.num_timesteps} done, target {args.timesteps})."
        )

        wandb_run = None if args.no_wandb else start_wandb(run_name, run_dir, config)
        reward_cb, episode_cb = make_callbacks(BaseCallback)
        callbacks = [
            CheckpointCallback(
                save_freq=max(args.save_freq // args.num_envs, 1),
                save_path=str(run_dir),
                name_prefix=CHECKPOINT_PREFIX,
            ),
            MaskableEvalCallback(
                eval_env,
                n_eval_episodes=args.eval_episodes,
                eval_freq=max(args.eval_freq // args.num_envs, 1),
                best_model_save_path=str(run_dir),
                log_path=str(log_dir),
                deterministic=True,
                use_masking=True,
                verbose=1,
            ),
            reward_cb(wandb_run),
            make_engine_crash_callback(BaseCallback)(
                int(os.environ[KILL_ENGINE_ENV]) if os.environ.get(KILL_ENGINE_ENV) else None
            ),
            episode_cb(args.model_dir / "training_history.db", wandb_run_id(run_name), wandb_run),
        ]
        if wandb_run is not None:
            try:
                from wandb.integration.sb3 import WandbCallback

                callbacks.append(WandbCallback(model_save_path=str(run_dir), verbose=0))
            except Exception as error:
                print(f"WARNING: W&B SB3 callback unavailable ({error})")
        progress = not args.no_progress_bar and _have_progress_bar()
        model.learn(
            total_timesteps=remaining,
            callback=CallbackList(callbacks),
            reset_num_timesteps=args.resume is None,
            tb_log_name=run_name,
            progress_bar=progress,
        )
        model.save(run_dir / "final_model.zip")
        print(f"Saved {run_dir / 'final_model.zip'}")
    except KeyboardInterrupt:
        what = "SIGTERM" if interrupted["signal"] else "Ctrl+C"
        if model is not None:
            model.save(run_dir / "interrupted_model.zip")
            print(f"{what}: saved {run_dir / 'interrupted_model.zip'}")
        status = 130 if interrupted["signal"] is None else 143
    except (EngineError, EOFError, BrokenPipeError, ConnectionResetError) as error:
        print(f"The Swift engine failed: {error}", file=sys.stderr)
        if model is not None:
            path = run_dir / "crash_recovery_model.zip"
            model.save(path)
            print(
                f"Saved {path}. Resume with:\n  python {Path(__file__).resolve()} --resume {path} "
                f"--timesteps {args.timesteps} --num-envs {args.num_envs}",
                file=sys.stderr,
            )
        status = 1
    finally:
        signal.signal(signal.SIGTERM, previous_sigterm)
        close_quietly(vec_env)
        close_quietly(eval_env)
        if wandb_run is not None:
            try:
                wandb_run.finish()
            except Exception as error:
                print(f"WARNING: wandb finish failed ({error})")
    return status


def _have_progress_bar() -> bool:
    try:
        import rich  # noqa: F401
        import tqdm  # noqa: F401
    except ImportError:
        print("note: tqdm/rich are not installed; progress bar off")
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
