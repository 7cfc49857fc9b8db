"""Play HackMatrix yourself, on the Swift or the JAX engine.

Window (pygame): arrows move or attack, S siphons, a letter runs each owned
program (the key map is drawn under the board; U is UNDO), N starts a new
game, Q or Esc quits. Valid moves are marked on your cell and usable programs
are highlighted; the reward breakdown of each step is shown in the panel.

Terminal (no display, or --text): the board is printed as text and commands
are read from standard input, one or more per line: "up", "right", "s",
"crash", "7", "new", "help", "quit". End of input quits.

    hackmatrix-play --engine jax --seed 7
    printf 'right\\nup\\ns\\nquit\\n' | hackmatrix-play --engine jax --text
    hackmatrix-play --hint                            # the shipped policy's search suggests moves
    hackmatrix-play --hint checkpoints/<run>          # the search suggests a move each turn

With `--hint POLICY` a trained network plans every position you reach with the fair
search (specs/search.md: it sees only what you see) and prints "the search suggests
..." with its improved policy's top moves; you still choose the move.

`hackmatrix-play` is the installed command;
`python python/scripts/play.py` runs the same `main`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hackmatrix.commands.options import add_search_flags, check_search_flags, search_options
from hackmatrix.pretrained import PRETRAINED_NAME
from hackmatrix.render import action_name, keymap
from hackmatrix.render.sessions import ENGINES, InvalidActionError, StepOutcome, open_session
from hackmatrix.render.text import LEGEND
from hackmatrix.render.viewer import Viewer


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="swift",
        help="which engine runs the game (default swift)",
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="game seed 0..4294967295 (default: random)"
    )
    parser.add_argument(
        "--text", action="store_true", help="play in the terminal even when a display is available"
    )
    parser.add_argument("--scale", type=float, default=1.0, help="window size factor (default 1.0)")
    parser.add_argument(
        "--color",
        action="store_true",
        help="ANSI colours in terminal mode (default: when stdout is a terminal)",
    )
    parser.add_argument(
        "--binary",
        default=None,
        help="Swift CLI path (default: $HACKMATRIX_BINARY or the built one)",
    )
    parser.add_argument(
        "--hint",
        nargs="?",
        const=PRETRAINED_NAME,
        default=None,
        metavar="POLICY",
        help="a trained policy (params .npz, checkpoint .pkl or run directory) whose search "
        "suggests a move at every turn; --hint alone uses the policy that ships with the "
        "project",
    )
    add_search_flags(parser, flag="--hint-search")
    parser.set_defaults(hint_search=16)
    args = parser.parse_args(argv)
    check_search_flags(parser, args, flag="--hint-search")
    if args.seed is not None and not 0 <= args.seed <= 0xFFFFFFFF:
        parser.error(f"--seed must be in 0..4294967295, got {args.seed}")
    if not args.scale > 0:
        parser.error(f"--scale must be positive, got {args.scale}")
    return args


class Hinter:
    """The fair search of a trained network, as advice: what it would play from a state."""

    def __init__(self, path: str, simulations: int, args, seed: int = 0) -> None:
        import jax

        from hackmatrix.jax_cache import enable_compilation_cache
        from hackmatrix.pretrained import pretrained_params
        from hackmatrix.purejaxrl.checkpoint import load_policy
        from hackmatrix.search.search import Searcher, config_for_policy

        enable_compilation_cache()
        policy = load_policy(pretrained_params() if path == PRETRAINED_NAME else Path(path))
        self.config = config_for_policy(
            policy.config, num_simulations=simulations, **search_options(args)
        )
        self.searcher = Searcher(policy.network, self.config)
        self.params = policy.params
        self.source = policy.source
        self.key = jax.random.PRNGKey(seed)
        self.asked = 0

    def suggest(self, state: dict) -> str:
        """'the search suggests UP (0) ...' for a running game's getState dict."""
        import jax
        import numpy as np

        from hackmatrix.jax_env import state_from_json

        self.asked += 1
        out = self.searcher.search(
            jax.random.fold_in(self.key, self.asked), state_from_json(state), self.params
        )
        action = int(out.action)
        weights = np.asarray(out.weights)
        top = [a for a in np.argsort(-weights, kind="stable")[:3] if weights[a] > 0]
        others = ", ".join(f"{action_name(int(a))} {weights[a]:.2f}" for a in top)
        return (
            f"the search suggests {action_name(action)} ({action})  "
            f"[{self.config.num_simulations} simulations; improved policy: {others}; "
            f"value {float(out.value):+.2f}]"
        )


class HumanGame:
    """One session plus what the screen shows about the last step and the episode."""

    def __init__(self, session, seed: int | None, hinter: Hinter | None = None):
        self.hinter = hinter
        self.session = session
        self.first_seed = seed
        self.games = 0
        self.new_game(seed)

    def new_game(self, seed: int | None = None) -> None:
        self.seed = self.session.reset(seed)
        self.games += 1
        self.steps = 0
        self.total_reward = 0.0
        self.last: StepOutcome | None = None
        self.done = False

    def act(self, action: int) -> list[str]:
        """Run one action; returns lines to tell the player."""
        if self.done:
            return ["the game is over: N (or 'new') for a new game, Q to quit"]
        try:
            outcome = self.session.step(action)
        except InvalidActionError:
            return [f"not allowed now: {action_name(action)} ({action})"]
        self.last = outcome
        self.steps += 1
        self.total_reward += outcome.reward
        self.done = outcome.done
        lines = [
            f"step {self.steps}: {action_name(action)} ({action})  reward {outcome.reward:+.4f}"
        ]
        if outcome.stage_complete and not outcome.won:
            lines.append("stage complete!")
        if outcome.done:
            verdict = "YOU WON" if outcome.won else "YOU DIED"
            lines.append(
                f"{verdict} after {self.steps} steps, total reward {self.total_reward:+.3f}. "
                "N for a new game, Q to quit"
            )
        return lines

    def title(self) -> str:
        return (
            f"HackMatrix  ·  {self.session.name} engine  ·  seed {self.seed}  ·  step {self.steps}"
        )

    def render_kwargs(self, state: dict) -> dict:
        kwargs = {
            "mask": self.session.mask(),
            "title": self.title(),
            "footer": keymap.key_help_lines(state.get("ownedPrograms", [])),
        }
        if self.last is not None:
            kwargs.update(
                last_action=self.last.action,
                reward_components=self.last.components,
                reward=self.last.reward,
            )
        return kwargs

    def show(self, viewer: Viewer) -> None:
        state = self.session.state()
        viewer.show(state, **self.render_kwargs(state))

    def hint(self, viewer: Viewer) -> None:
        """The search's suggestion for the position on the board, if hints are on."""
        if self.hinter is not None and not self.done:
            viewer.message(self.hinter.suggest(self.session.state()))


HELP_TEXT = (
    "commands: up down left right | s (siphon) | "
    "a program name, its key letter or its index 5..27 | new | help | quit"
)


def play_terminal(game: HumanGame, viewer: Viewer, lines) -> None:
    interactive = hasattr(sys.stdin, "isatty") and sys.stdin.isatty()
    game.show(viewer)
    viewer.message(HELP_TEXT)
    game.hint(viewer)
    while True:
        if interactive:
            print("> ", end="", flush=True)
        line = lines.readline()
        if not line:
            return  # end of input
        for token in line.split():
            kind, action = keymap.parse_command(token)
            if kind == "quit":
                return
            if kind == "help":
                viewer.message(HELP_TEXT + "\n" + LEGEND)
            elif kind == "new":
                game.new_game()
                game.show(viewer)
                game.hint(viewer)
            elif kind == "unknown":
                viewer.message(f"unknown command {token!r} ({HELP_TEXT})")
            elif action is not None:  # kind == "action"
                messages = game.act(action)
                game.show(viewer)
                for message in messages:
                    viewer.message(message)
                game.hint(viewer)


def play_window(game: HumanGame, viewer: Viewer) -> None:
    game.show(viewer)
    game.hint(viewer)
    while True:
        key = viewer.wait_key()
        if key is None:  # only after a timeout, and none is asked for
            continue
        if key == "quit" or key in keymap.QUIT_KEYS:
            return
        if key in keymap.NEW_GAME_KEYS:
            game.new_game()
            game.show(viewer)
            game.hint(viewer)
            continue
        action = keymap.action_for_key(key)
        if action is None:
            continue
        for message in game.act(action):
            print(message, flush=True)
        game.show(viewer)
        game.hint(viewer)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        session = open_session(args.engine, binary=args.binary)
    except FileNotFoundError as error:
        print(
            f"cannot start the {args.engine} engine: {error}\n(try --engine jax)", file=sys.stderr
        )
        return 2
    viewer = Viewer(
        "HackMatrix",
        mode="text" if args.text else "auto",
        color=True if args.color else None,
        scale=args.scale,
    )
    if viewer.fallback_reason:
        print(f"terminal mode: {viewer.fallback_reason}", file=sys.stderr)
    hinter = None
    if args.hint is not None:
        from hackmatrix.purejaxrl.checkpoint import CheckpointError

        try:
            hinter = Hinter(args.hint, args.hint_search, args, seed=args.seed or 0)
        except (CheckpointError, OSError, ValueError) as error:
            print(f"error: --hint {args.hint}: {error}", file=sys.stderr)
            session.close()
            return 2
        print(
            f"hints from {hinter.source}: the fair search, {args.hint_search} simulations "
            "(compiling it takes a minute or more the first time)",
            file=sys.stderr,
            flush=True,
        )
    try:
        game = HumanGame(session, args.seed, hinter)
        if hasattr(session, "warm_up"):
            print(
                "compiling the JAX engine (about a minute the first time, cached afterwards)...",
                file=sys.stderr,
                flush=True,
            )
            session.warm_up()
        if viewer.mode == "window":
            play_window(game, viewer)
        else:
            play_terminal(game, viewer, sys.stdin)
    except KeyboardInterrupt:
        pass
    finally:
        viewer.close()
        session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
