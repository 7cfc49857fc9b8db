"""See what an agent does: play a fixed set of games and report its behaviour (training.md §9).

    hackmatrix-evaluate --latest
    hackmatrix-evaluate checkpoints/<run> --policy both --png behaviour.png
    hackmatrix-evaluate --compare random checkpoints/<run>/params_40.npz --json out.json
    hackmatrix-evaluate checkpoints/<run> --last-checkpoints 3   # the run's last 3 saves pooled
    hackmatrix-evaluate checkpoints/<run> --checkpoint-updates 220 280 305   # chosen saves
    hackmatrix-evaluate checkpoints/<run> --search 16   # and with the fair search, paired
    hackmatrix-evaluate --pretrained --search 16      # the shipped policy, with and without search
    hackmatrix-evaluate --pretrained --search 16 --search-value-from checkpoints/<run>
    hackmatrix-evaluate --reports baseline.json change.json   # plays nothing
    hackmatrix-evaluate --seeds s1.json s2.json s3.json --target 'mean_final_stage>=3'

`hackmatrix-evaluate` is the installed command;
`python python/scripts/evaluate_agent.py` runs the same `main`.

A policy is a params file (.npz), a checkpoint (.pkl), a run directory (its
latest checkpoint), `latest` / `--latest` (the newest run under
--checkpoint-dir), `pretrained` / `--pretrained` (the policy that ships with the
project) or `random` (uniform over the valid actions).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hackmatrix.analysis.evaluation import evaluate_pooled
from hackmatrix.analysis.games import (
    DEFAULT_BATCH,
    DEFAULT_EPISODES,
    DEFAULT_MAX_STEPS,
    check_settings,
    start_params,
)
from hackmatrix.analysis.png import write_png
from hackmatrix.analysis.policies import (
    EvaluationError,
    chosen_checkpoint_policies,
    last_checkpoint_policies,
    load_policy_spec,
    pooled_label,
    with_value_of,
)
from hackmatrix.analysis.report import report
from hackmatrix.analysis.table import format_table
from hackmatrix.commands.options import (
    add_search_flags,
    check_search_flags,
    describe_search_extras,
    search_options,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Evaluate the behaviour of HackMatrix policies on a fixed game set."
    )
    _add_what_to_read(parser.add_argument_group("what to read"))
    _add_which_checkpoints(parser.add_argument_group("which checkpoints of a run"))
    _add_how_to_play(parser.add_argument_group("the games and how they are played"))
    planning = parser.add_argument_group("planning (specs/search.md)")
    add_search_flags(planning, several=True)
    planning.add_argument(
        "--search-value-from",
        default=None,
        metavar="POLICY",
        help="the searched columns take their prior from the evaluated policy and their "
        "value (and the discount, value scale and trained tree reward) from this one, e.g. "
        "the shipped policy's siphon-proposing prior with a stronger network's value "
        "(specs/search.md §6); the columns without search are unchanged",
    )
    output = parser.add_argument_group("output")
    output.add_argument("--json", type=Path, default=None, help="write the summaries as JSON here")
    output.add_argument(
        "--png", type=Path, default=None, help="write the behaviour figure here (needs matplotlib)"
    )
    parser.add_argument("--env-module", default="hackmatrix.jax_env", help=argparse.SUPPRESS)
    return parser


def _add_what_to_read(p) -> None:
    p.add_argument(
        "model",
        nargs="?",
        default=None,
        metavar="POLICY",
        help="params .npz, checkpoint .pkl, run directory, 'latest' or 'random'",
    )
    p.add_argument(
        "--compare",
        nargs="+",
        metavar="POLICY",
        default=None,
        help="evaluate several policies on the same games and show them side by side",
    )
    p.add_argument(
        "--reports",
        nargs="+",
        type=Path,
        metavar="JSON",
        default=None,
        help="play nothing: compare saved --json reports, each number with its standard error "
        "and each column's difference from the first (paired over the same games)",
    )
    p.add_argument(
        "--seeds",
        nargs="+",
        type=Path,
        metavar="JSON",
        default=None,
        help="play nothing: saved --json reports of one configuration trained on different "
        "seeds, one report per seed; each number per seed, its mean over the seeds, the "
        "seed-to-seed standard deviation and the standard error of the mean",
    )
    p.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="KEY>=VALUE",
        help="with --seeds: count the seeds meeting a bar on a headline number, e.g. "
        "mean_final_stage>=3 or program_use_rate>=25%% (also <=, >, <); repeatable",
    )
    p.add_argument("--latest", action="store_true", help="the newest run under --checkpoint-dir")
    p.add_argument(
        "--pretrained",
        action="store_true",
        help="the policy that ships with the project (python/hackmatrix/pretrained/MODEL_CARD.md); "
        "the policy name 'pretrained' means the same, e.g. --compare pretrained random",
    )


def _add_which_checkpoints(p) -> None:
    p.add_argument(
        "--checkpoint-dir",
        default="checkpoints",
        help="where --latest looks (default: checkpoints)",
    )
    p.add_argument(
        "--last-checkpoints",
        type=int,
        default=1,
        metavar="K",
        help="pool a run's K newest checkpoints: each plays the same games and the result "
        "is their mean, with errors over games (a run directory or latest; default 1)",
    )
    p.add_argument(
        "--checkpoint-updates",
        type=int,
        nargs="+",
        default=None,
        metavar="U",
        help="pool a run's checkpoints saved at these updates (checkpoint_U.pkl), pooled as "
        "--last-checkpoints pools: to read two runs at the same updates",
    )


def _add_how_to_play(p) -> None:
    p.add_argument(
        "--policy",
        dest="mode",
        choices=("greedy", "sample", "both"),
        default="greedy",
        help="greedy (argmax of the masked logits), sample (from them) or both (default greedy)",
    )
    p.add_argument(
        "--episodes",
        type=int,
        default=DEFAULT_EPISODES,
        help=f"games to play (default {DEFAULT_EPISODES:,})",
    )
    p.add_argument(
        "--first-seed",
        type=int,
        default=0,
        help="index of the first game; games first..first+episodes-1 (default 0)",
    )
    p.add_argument(
        "--max-steps",
        type=int,
        default=DEFAULT_MAX_STEPS,
        help=f"step cap per game; a game still running then is unfinished "
        f"(default {DEFAULT_MAX_STEPS:,})",
    )
    p.add_argument(
        "--batch",
        type=int,
        default=DEFAULT_BATCH,
        help=f"games played at once (default {DEFAULT_BATCH})",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="key of the sampled and random policies (default 0)"
    )
    p.add_argument(
        "--start-transmissions",
        type=int,
        default=0,
        metavar="T",
        help="a probe, not the canonical game: every game starts with T siphon transmissions "
        "pending (0..35); they appear after the first turn as a siphon's would, so the games "
        "show how the agent fights siphon-spawned enemies (default 0: canonical starts)",
    )


def parse_args(argv=None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_args(parser, args)
    return args


def _check_args(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The combinations argparse cannot check; `p.error` exits with the usage line."""
    given = [
        args.model is not None,
        args.compare is not None,
        args.latest,
        args.pretrained,
        args.reports is not None,
        args.seeds is not None,
    ]
    if sum(given) != 1:
        p.error(
            "give exactly one of: a policy, --compare POLICY..., --latest, --pretrained, "
            "--reports JSON..., --seeds JSON..."
        )
    if args.last_checkpoints < 1:
        p.error(f"--last-checkpoints must be at least 1, got {args.last_checkpoints}")
    check_search_flags(p, args)
    if args.search_value_from is not None and not args.search:
        p.error("--search-value-from gives the search a value: it needs --search N")
    if args.search and (args.reports is not None or args.seeds is not None):
        p.error("--search plays games; --reports and --seeds play nothing")
    if args.last_checkpoints > 1 and (args.reports is not None or args.seeds is not None):
        p.error("--last-checkpoints plays checkpoints; --reports and --seeds play nothing")
    if args.checkpoint_updates is not None:
        if args.last_checkpoints > 1:
            p.error("give --last-checkpoints or --checkpoint-updates, not both")
        if args.reports is not None or args.seeds is not None:
            p.error("--checkpoint-updates plays checkpoints; --reports and --seeds play nothing")
    if args.target and args.seeds is None:
        p.error("--target counts seeds: it needs --seeds JSON...")
    if args.seeds is not None:
        from hackmatrix.analysis.seed_stats import parse_target

        try:
            args.target = [parse_target(text) for text in args.target]
        except ValueError as error:
            p.error(str(error))


def policy_texts(args) -> list[str]:
    if args.latest:
        return ["latest"]
    if args.pretrained:
        return ["pretrained"]
    return args.compare if args.compare is not None else [args.model]


def choose_policies(text: str, args) -> list:
    """The checkpoints one policy argument stands for: one, the run's newest K, or the
    run's saves at the named updates."""
    if args.checkpoint_updates is not None:
        return chosen_checkpoint_policies(
            text, args.checkpoint_updates, checkpoint_dir=args.checkpoint_dir
        )
    return last_checkpoint_policies(text, args.last_checkpoints, checkpoint_dir=args.checkpoint_dir)


def search_value_policy(args):
    """The policy whose value the searched columns read (--search-value-from), or None."""
    if args.search_value_from is None:
        return None
    value = load_policy_spec(args.search_value_from, checkpoint_dir=args.checkpoint_dir)
    if value.is_random:
        raise EvaluationError("--search-value-from needs a trained network, not random")
    return value


def search_config(train_config: dict, simulations: int, args):
    """The search a policy plays with: the run's gamma and value target, the flags' rest."""
    from hackmatrix.search.search import config_for_policy

    return config_for_policy(train_config, num_simulations=simulations, **search_options(args))


def describe_search(config) -> str:
    cap = "no UNDO cap" if config.undo_cap is None else f"UNDO cap {config.undo_cap}"
    tree = "env" if config.tree_reward is None else config.tree_reward.name
    return (
        f"{config.num_roots} sampled root(s), {config.max_num_considered_actions} considered, "
        f"discount {config.discount}, value {config.value_target}, {cap}, tree reward {tree}, "
        f"c_scale {config.c_scale}" + describe_search_extras(config)
    )


def search_differences(document: dict, results: list, searched: list) -> str:
    """Each searched column less the same network without search, paired over the games."""
    from hackmatrix.analysis import eval_stats

    columns = eval_stats.report_columns(document, Path("this evaluation"))
    index = {id(result): k for k, result in enumerate(results)}
    out = []
    for plain, with_search in searched:
        first = columns[index[id(plain)]]
        other = columns[index[id(with_search)]]
        out += [f"{other.name} - {first.name}:"]
        out += eval_stats.difference_table(first, [other], ["search - no search"])
        out.append("")
    return "\n".join(out).rstrip()


def compare_saved(paths: list[Path]) -> int:
    """`--reports`: the saved reports side by side, with standard errors; plays nothing."""
    from hackmatrix.analysis import eval_stats

    try:
        print(eval_stats.compare_reports(paths))
    except eval_stats.ReportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def summarize_saved_seeds(paths: list[Path], targets: list) -> int:
    """`--seeds`: saved reports of one configuration on several seeds; plays nothing."""
    from hackmatrix.analysis import eval_stats, seed_stats

    try:
        print(seed_stats.summarize_seeds(paths, targets))
    except eval_stats.ReportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.reports is not None:
        return compare_saved(args.reports)
    if args.seeds is not None:
        return summarize_saved_seeds(args.seeds, args.target)
    import importlib

    from hackmatrix.jax_cache import enable_compilation_cache

    enable_compilation_cache()
    modes = ("greedy", "sample") if args.mode == "both" else (args.mode,)
    settings = dict(
        episodes=args.episodes,
        first_game=args.first_seed,
        max_steps=args.max_steps,
        batch=args.batch,
        seed=args.seed,
    )
    if args.start_transmissions:
        settings["start_transmissions"] = args.start_transmissions
    checked = ("episodes", "first_game", "max_steps", "batch")
    try:
        for mode in modes:
            check_settings(mode, **{k: settings[k] for k in checked})
        if args.png is not None:
            import matplotlib  # noqa: F401 - fail before playing, not after
        policies = [choose_policies(text, args) for text in policy_texts(args)]
        value = search_value_policy(args)
    except EvaluationError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except ImportError as error:
        print(
            f"error: --png needs matplotlib ({error}); pip install 'hackmatrix[viz]'",
            file=sys.stderr,
        )
        return 2
    env = importlib.import_module(args.env_module)
    try:
        start_params(env, args.start_transmissions)
    except EvaluationError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.start_transmissions:
        print(
            f"probe: every game starts with {args.start_transmissions} siphon transmissions "
            "pending (not the canonical start)"
        )

    results = []
    searched = []  # (the network's result, the same network with search)
    for pooled in policies:
        first = pooled[0]
        label = pooled_label(pooled)
        # what the searched columns play: the policy, or its prior with another's value
        searched_pooled = (
            pooled
            if value is None or first.is_random
            else [with_value_of(p, value) for p in pooled]
        )
        for mode in ("random",) if first.is_random else modes:
            print(
                f"playing {args.episodes:,} games: {label} ({mode})"
                + (f" from {', '.join(str(p.source) for p in pooled)}" if first.source else ""),
                flush=True,
            )
            results.append(evaluate_pooled(env, pooled, mode, **settings))
            plain = results[-1]
            for simulations in [] if first.is_random else args.search or []:
                search = search_config(searched_pooled[0].config, simulations, args)
                print(
                    f"playing {args.episodes:,} games: {pooled_label(searched_pooled)} ({mode}) "
                    f"+ search {simulations} ({describe_search(search)})",
                    flush=True,
                )
                results.append(
                    evaluate_pooled(env, searched_pooled, mode, search=search, **settings)
                )
                searched.append((plain, results[-1]))

    print()
    print(format_table(results))
    if args.checkpoint_updates is not None:
        pooling = {"checkpoint_updates": sorted(args.checkpoint_updates)}
    elif args.last_checkpoints > 1:
        pooling = {"last_checkpoints": args.last_checkpoints}
    else:
        pooling = {}
    value_from = {} if value is None else {"value_from": value.source}
    search_settings = (
        {"search": {"simulations": args.search, **search_options(args), **value_from}}
        if args.search
        else {}
    )
    document = report(
        results,
        {
            **settings,
            **pooling,
            **search_settings,
            "max_steps": args.max_steps,
            "env": args.env_module,
        },
    )
    if searched:
        print()
        print(search_differences(document, results, searched))
    if args.json is not None:
        args.json.write_text(json.dumps(document, indent=2))
        print(f"wrote {args.json}")
    if args.png is not None:
        print(f"wrote {write_png(results, args.png)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
