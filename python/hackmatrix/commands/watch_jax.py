"""Watch a JAX-trained policy play HackMatrix (training.md §5.1).

The policy plays on the Swift reference engine by default (its JSON
observation is flattened exactly as the JAX trainer sees it, so this also
checks the two engines agree); `--engine jax` plays on the JAX engine.
A pygame window shows the board when a display is available, otherwise the
board is printed as text each step. `--record out.gif` (or .mp4) saves one
frame per step.

    hackmatrix-watch --pretrained --search 16   # the shipped policy, planning
    hackmatrix-watch --latest --episodes 3
    hackmatrix-watch checkpoints/<run>/params_40.npz --engine jax --record run.gif
    hackmatrix-watch checkpoints/<run> --search 16   # plan with the fair search

With `--search N` the network plans each move with the fair search (specs/search.md):
the engine's full state is read back each step (`getState` on Swift), the search
starts from roots sampled from what the player can see, and the action it picks is
played on the chosen engine, so a searched game is an ordinary list of actions.

`hackmatrix-watch` is the installed command;
`python python/scripts/watch_jax_agent.py` runs the same `main`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hackmatrix.commands.options import (
    add_sampling_flags,
    add_search_flags,
    check_search_flags,
    describe_search_extras,
    search_options,
)
from hackmatrix.names import FIRST_PROGRAM_ACTION, PROGRAM_NAMES, action_name
from hackmatrix.pretrained import pretrained_params
from hackmatrix.render import render_rgb, save_recording
from hackmatrix.render.agent_policy import PolicyLoadError, find_latest_params, load_policy
from hackmatrix.render.recording import VIDEO_SUFFIXES, video_backend_available
from hackmatrix.render.sessions import ENGINES, InvalidActionError, open_session
from hackmatrix.render.viewer import Viewer


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Watch a JAX-trained HackMatrix policy play.")
    parser.add_argument(
        "model_path",
        nargs="?",
        default=None,
        help="params_*.npz, final_params.npz, checkpoint_*.pkl, or a run directory",
    )
    parser.add_argument(
        "--latest",
        action="store_true",
        help="use the newest run under --checkpoint-dir "
        "(final_params.npz, else the highest params_N.npz)",
    )
    parser.add_argument(
        "--checkpoint-dir",
        default="checkpoints",
        help="where --latest looks (default: checkpoints)",
    )
    parser.add_argument(
        "--pretrained",
        action="store_true",
        help="the policy that ships with the project (python/hackmatrix/pretrained/MODEL_CARD.md)",
    )
    parser.add_argument("--episodes", type=int, default=3, help="episodes to play (default 3)")
    parser.add_argument(
        "--max-steps", type=int, default=500, help="step cap per episode (default 500)"
    )
    parser.add_argument(
        "--hidden-dim", type=int, default=None, help="override the detected trunk width"
    )
    parser.add_argument(
        "--num-layers", type=int, default=None, help="override the detected trunk depth"
    )
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="swift",
        help="engine to play on (default swift, the reference engine)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of the first episode; episode i uses seed+i (default: random seeds)",
    )
    add_sampling_flags(parser)
    add_search_flags(parser)
    parser.add_argument(
        "--speed",
        type=float,
        default=4.0,
        help="steps shown per second; 0 = as fast as possible (default 4)",
    )
    parser.add_argument(
        "--record", default=None, help="save the frames to a .gif or video (.mp4) file"
    )
    parser.add_argument(
        "--fps", type=float, default=None, help="recording frame rate (default: --speed, or 4)"
    )
    parser.add_argument(
        "--text", action="store_true", help="print the board as text even when a display exists"
    )
    parser.add_argument(
        "--no-view", action="store_true", help="show nothing per step (summaries only)"
    )
    parser.add_argument("--scale", type=float, default=1.0, help="frame size factor (default 1.0)")
    parser.add_argument("--debug", action="store_true", help="Swift engine debug logging (stderr)")
    parser.add_argument("--info", action="store_true", help="Swift engine info logging (stderr)")
    parser.add_argument(
        "--binary",
        default=None,
        help="Swift CLI path (default: $HACKMATRIX_BINARY or the built one)",
    )
    args = parser.parse_args(argv)
    check_search_flags(parser, args)
    if (args.model_path is not None) + args.latest + args.pretrained != 1:
        parser.error("give one of: a model path, --latest, --pretrained")
    for name in ("episodes", "max_steps"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.speed < 0:
        parser.error("--speed must be >= 0")
    if args.fps is not None and not args.fps > 0:
        parser.error("--fps must be positive")
    if args.seed is not None and not 0 <= args.seed <= 0xFFFFFFFF:
        parser.error("--seed must be in 0..4294967295")
    if args.record is not None and Path(args.record).suffix.lower() not in (
        ".gif",
        *VIDEO_SUFFIXES,
    ):
        parser.error(f"--record needs a .gif or video ({', '.join(VIDEO_SUFFIXES)}) file name")
    if not args.scale > 0:
        parser.error("--scale must be positive")
    if (
        args.record is not None
        and Path(args.record).suffix.lower() != ".gif"
        and not video_backend_available()
    ):
        print(
            f"warning: no video backend (pip install 'imageio[ffmpeg]'): "
            f"{args.record} will be saved as a GIF",
            file=sys.stderr,
        )
    return args


def describe_player(state: dict) -> str:
    p = state["player"]
    return (
        f"hp {p.get('hp', 3)}  credits {p.get('credits', 0)}  energy {p.get('energy', 0)}  "
        f"siphons {p.get('dataSiphons', 0)}  score {p.get('score', 0)}  "
        f"stage {state.get('stage', 1)}  "
        f"at ({p['row']},{p['col']})"
    )


class Planner:
    """The fair search as the watcher's policy: one search per move from the engine's state."""

    def __init__(self, policy, simulations: int, args, seed: int) -> None:
        import jax

        from hackmatrix.jax_cache import enable_compilation_cache
        from hackmatrix.purejaxrl.checkpoint import stored_config
        from hackmatrix.search.search import Searcher, config_for_policy

        try:
            train_config = stored_config(Path(policy.source))
        except Exception:  # a bare params file: the defaults
            train_config = {}
        enable_compilation_cache()
        self.config = config_for_policy(
            train_config,
            num_simulations=simulations,
            selection="sample" if args.sample else "greedy",
            **search_options(args),
        )
        self.searcher = Searcher(policy.network, self.config)
        self.params = policy.params
        self.key = jax.random.PRNGKey(seed)
        self.episode = 0

    def start(self, episode: int) -> None:
        self.episode = episode

    def choose(self, step: int, state: dict) -> int:
        import jax

        from hackmatrix.jax_env import state_from_json

        key = jax.random.fold_in(jax.random.fold_in(self.key, self.episode), step)
        return int(self.searcher.choose(key, state_from_json(state), self.params))


def play_episode(
    episode: int, args, session, policy, viewer: Viewer, frames: list | None, planner=None
) -> dict:
    seed = None if args.seed is None else (args.seed + episode) & 0xFFFFFFFF
    seed = session.reset(seed)
    if planner is not None:
        planner.start(episode)
    state = session.state()
    delay = 0.0 if args.speed == 0 else 1.0 / args.speed
    header = f"episode {episode + 1}/{args.episodes}  ·  {session.name} engine  ·  seed {seed}"
    viewer.show(state, mask=session.mask(), title=f"{header}  ·  step 0")
    total, steps, invalid, top_stage = 0.0, 0, 0, int(state.get("stage", 1))
    used: dict[str, int] = {}  # program name -> times run
    outcome = "step cap"
    while steps < args.max_steps:
        if planner is not None:
            action = planner.choose(steps, state)
        else:
            action = policy.act(session.observation(), session.mask(), greedy=not args.sample)
        try:
            result = session.step(action)
        except InvalidActionError as error:
            invalid += 1
            print(f"  engine rejected {action_name(action)} ({action}): {error}", file=sys.stderr)
            outcome = "invalid action"
            break
        steps += 1
        total += result.reward
        if action >= FIRST_PROGRAM_ACTION:
            program = PROGRAM_NAMES[action - FIRST_PROGRAM_ACTION]
            used[program] = used.get(program, 0) + 1
        state = session.state()
        top_stage = max(top_stage, int(state.get("stage", 1)))
        title = f"{header}  ·  step {steps}"
        render = dict(
            last_action=action,
            reward_components=result.components,
            reward=result.reward,
            mask=session.mask(),
            title=title,
        )
        frame = viewer.show(state, **render)
        if frames is not None:  # one frame per step: the state after it
            frames.append(
                frame if frame is not None else render_rgb(state, scale=args.scale, **render)
            )
        print(
            f"  step {steps:3d}  {action_name(action):>7} ({action:2d})  "
            f"reward {result.reward:+8.3f}  {describe_player(state)}  "
            f"programs {[action_name(a) for a in state.get('ownedPrograms', [])]}",
            flush=True,
        )
        if result.done:
            outcome = "won" if result.won else "died"
            break
        if delay and not viewer.sleep(delay):
            raise KeyboardInterrupt  # the window was closed
    summary = {
        "episode": episode + 1,
        "seed": seed,
        "steps": steps,
        "total_reward": total,
        "highest_stage": top_stage,
        "outcome": outcome,
        "programs_used": used,
        "invalid_actions": invalid,
    }
    print(
        f"episode {episode + 1}: {outcome}, {steps} steps, total reward {total:+.3f}, "
        f"highest stage {top_stage}, programs used {used or 'none'}, invalid actions {invalid}",
        flush=True,
    )
    return summary


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        if args.pretrained:
            model_path = pretrained_params()
        elif args.latest:
            model_path = find_latest_params(args.checkpoint_dir)
        else:
            model_path = args.model_path
        policy = load_policy(
            model_path, hidden_dim=args.hidden_dim, num_layers=args.num_layers, seed=args.seed or 0
        )
    except (PolicyLoadError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    arch = policy.architecture
    print(
        f"policy {policy.source}: {arch.network} network, hidden_dim {arch.hidden_dim}, "
        f"num_layers {arch.num_layers}, "
        f"{'sampled' if args.sample else 'greedy'} actions",
        flush=True,
    )
    planner = None
    if args.search is not None:
        planner = Planner(policy, args.search, args, seed=args.seed or 0)
        c = planner.config
        print(
            f"planning with the fair search: {c.num_simulations} simulations, "
            f"{c.num_roots} sampled root(s) per move"
            + describe_search_extras(c)
            + " (compiling it takes a minute or more "
            "the first time)",
            flush=True,
        )

    log_level = "debug" if args.debug else ("info" if args.info else None)
    try:
        session = open_session(args.engine, binary=args.binary, log_level=log_level)
    except FileNotFoundError as error:
        print(
            f"error: cannot start the {args.engine} engine: {error}\n"
            "(--engine jax plays without Swift)",
            file=sys.stderr,
        )
        return 2
    mode = "none" if args.no_view else ("text" if args.text else "auto")
    viewer = Viewer("HackMatrix agent", mode=mode, scale=args.scale)
    if viewer.fallback_reason:
        print(f"text view: {viewer.fallback_reason}", file=sys.stderr)
    frames: list | None = [] if args.record else None
    summaries = []
    try:
        for episode in range(args.episodes):
            summaries.append(play_episode(episode, args, session, policy, viewer, frames, planner))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    finally:
        viewer.close()
        session.close()

    invalid = sum(s["invalid_actions"] for s in summaries)
    if summaries:
        mean = sum(s["total_reward"] for s in summaries) / len(summaries)
        print(
            f"{len(summaries)} episodes: mean reward {mean:+.3f}, "
            f"best stage {max(s['highest_stage'] for s in summaries)}, "
            f"invalid actions reported by the {args.engine} engine: {invalid} (should be 0)",
            flush=True,
        )
    if frames:
        fps = args.fps or (args.speed if args.speed > 0 else 4.0)
        try:
            path = save_recording(frames, args.record, fps)
        except (
            RuntimeError
        ) as error:  # no video backend: keep the frames as a GIF rather than lose them
            path = save_recording(frames, Path(args.record).with_suffix(".gif"), fps)
            print(f"warning: {error}\nsaved a GIF instead", file=sys.stderr)
        print(f"recorded {len(frames)} frames to {path}", flush=True)
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
