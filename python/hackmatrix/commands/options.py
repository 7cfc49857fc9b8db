"""Command-line options shared by the commands that play a trained network.

Numpy-free and import-light: the parity CLI imports it too.
"""

import math


def add_sampling_flags(
    parser,
    greedy_help: str = "greedy actions: argmax of the masked logits (the default)",
    sample_help: str = "sample actions from the masked policy distribution",
) -> None:
    """--deterministic (the default) / --sample, read back as `args.sample`."""
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--deterministic", dest="sample", action="store_false", help=greedy_help)
    choice.add_argument("--sample", dest="sample", action="store_true", help=sample_help)
    parser.set_defaults(sample=False)  # store_false alone would default to True


def add_search_flags(parser, *, several: bool = False, flag: str = "--search") -> None:
    """The play-time search's flags (specs/search.md): `flag` N (simulations; `several`:
    one or more N, each played), --search-roots, --search-considered, --search-undo-cap,
    --search-tree-reward, --search-c-scale, --search-worlds, --search-leaf-rollout."""
    from ..purejaxrl.config import SEARCH_TREE_REWARDS  # the trainer's list (light: no jax)

    parser.add_argument(
        flag,
        type=int,
        nargs="+" if several else None,
        default=None,
        metavar="N",
        help="plan with the fair Gumbel MuZero search, N simulations per decision "
        "(specs/search.md)"
        + (
            "; several N play one column each, beside the network without search" if several else ""
        ),
    )
    parser.add_argument(
        "--search-roots",
        type=int,
        default=1,
        metavar="R",
        help="sampled roots per decision, their results averaged (default 1)",
    )
    parser.add_argument(
        "--search-considered",
        type=int,
        default=16,
        metavar="M",
        help="root actions the search's sequential halving starts from (default 16)",
    )
    parser.add_argument(
        "--search-undo-cap",
        type=int,
        default=None,
        metavar="K",
        help="at most K UNDOs on one search path (default: no cap; an UNDO loop is valued "
        "honestly anyway, specs/search.md §3.3)",
    )
    parser.add_argument(
        "--search-tree-reward",
        choices=SEARCH_TREE_REWARDS,
        default="env",
        help="the reward the search's tree adds: env, the game's own (default); trained, "
        "the reward the policy's run trained on, the one its value predicts "
        "(specs/search.md §3.4); trained-unweighted, the same with every component at its "
        "game weight",
    )
    parser.add_argument(
        "--search-c-scale",
        type=float,
        default=0.1,
        metavar="C",
        help="the weight of the search's Q-values against the network's prior in its "
        "improved policy and final choice (Gumbel MuZero's c_scale; default 0.1, "
        "specs/search.md §3.2)",
    )
    parser.add_argument(
        "--search-worlds",
        type=int,
        default=1,
        metavar="W",
        help="sampled states searched together in each root's one tree: every node steps "
        "all W with its action and averages their rewards, values and priors (default 1; "
        "needs --search-tree-reward env; specs/search.md §3.5)",
    )
    parser.add_argument(
        "--search-leaf-rollout",
        type=int,
        default=0,
        metavar="K",
        help="value each node the search reaches by K steps of the network's own greedy "
        "play from it, their discounted rewards plus the value where they stop (default 0: "
        "the value alone; each simulation then costs about K+1 network calls; needs "
        "--search-worlds 1; specs/search.md §3.6)",
    )


def check_search_flags(parser, args, flag: str = "--search") -> None:
    """parser.error for search flags out of range."""
    value = getattr(args, flag.lstrip("-").replace("-", "_"))
    values = value if isinstance(value, list) else [] if value is None else [value]
    if any(n < 1 for n in values):
        parser.error(f"{flag} needs at least 1 simulation, got {values}")
    if args.search_roots < 1:
        parser.error(f"--search-roots must be at least 1, got {args.search_roots}")
    if not 1 <= args.search_considered <= 28:
        parser.error(f"--search-considered must be in 1..28, got {args.search_considered}")
    if args.search_undo_cap is not None and args.search_undo_cap < 0:
        parser.error(f"--search-undo-cap must be >= 0, got {args.search_undo_cap}")
    c_scale = args.search_c_scale
    if not (math.isfinite(c_scale) and c_scale > 0):
        parser.error(f"--search-c-scale must be a finite number > 0, got {c_scale}")
    if args.search_worlds < 1:
        parser.error(f"--search-worlds must be at least 1, got {args.search_worlds}")
    if args.search_worlds > 1 and args.search_tree_reward != "env":
        parser.error(
            "--search-worlds above 1 searches with the game's own reward: "
            f"drop --search-tree-reward {args.search_tree_reward}"
        )
    if args.search_leaf_rollout < 0:
        parser.error(f"--search-leaf-rollout must be >= 0, got {args.search_leaf_rollout}")
    if args.search_leaf_rollout > 0 and args.search_worlds > 1:
        parser.error("--search-leaf-rollout walks one state: it needs --search-worlds 1")


def search_options(args) -> dict:
    """The SearchConfig fields the flags set (the simulations apart)."""
    return {
        "num_roots": args.search_roots,
        "max_num_considered_actions": args.search_considered,
        "undo_cap": args.search_undo_cap,
        "tree_reward": args.search_tree_reward,
        "c_scale": args.search_c_scale,
        "worlds": args.search_worlds,
        "leaf_rollout": args.search_leaf_rollout,
    }


def describe_search_extras(config) -> str:
    """What a SearchConfig adds beyond one world and no rollout, as the play tools print
    it after their own description (empty for the plain search)."""
    return (f", {config.worlds} worlds in each tree" if config.worlds > 1 else "") + (
        f", leaf rollout {config.leaf_rollout}" if config.leaf_rollout else ""
    )
