"""``python -m parity record|replay|fuzz|coverage|corpus``: see ``--help`` of each."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from hackmatrix.commands.options import add_sampling_flags


def _binary(args):
    return getattr(args, "binary", None)


def cmd_record(args) -> int:
    from parity.engines import make_engine
    from parity.policies import GreedyExitPolicy, RandomPolicy, ScriptedPolicy
    from parity.record import record
    from parity.trace import write_trace

    if (args.checkpoint is not None) != (args.policy == "checkpoint"):
        raise SystemExit(
            "record: --checkpoint PATH goes with --policy checkpoint (and only with it)"
        )
    if args.policy == "checkpoint":
        policy = _checkpoint_policy(args)
    elif args.policy == "script":
        if not args.actions:
            raise SystemExit("record: --policy script needs --actions 0,3,10,...")
        policy = ScriptedPolicy([int(a) for a in args.actions.split(",")])
    elif args.policy == "greedy":
        policy = GreedyExitPolicy(args.policy_seed)
    else:
        policy = RandomPolicy(args.policy_seed)
    state = json.loads(Path(args.state).read_text()) if args.state else None
    if (state is None) == (args.seed is None):
        raise SystemExit("record: give exactly one of --seed and --state")
    engine = make_engine(args.engine, _binary(args))
    try:
        trace = record(
            engine, policy, seed=args.seed, state=state, max_steps=args.max_steps, note=args.note
        )
    finally:
        engine.close()
    write_trace(trace, args.out)
    print(f"wrote {args.out}: {len(trace.steps)} steps")
    return 0


def _checkpoint_policy(args):
    from hackmatrix.render.agent_policy import PolicyLoadError
    from parity.policies import CheckpointPolicy

    try:
        policy = CheckpointPolicy(args.checkpoint, greedy=not args.sample, seed=args.policy_seed)
    except PolicyLoadError as error:
        raise SystemExit(f"record: cannot load checkpoint: {error}") from error
    print(f"policy: {policy.source} ({'sampled' if args.sample else 'greedy'})")
    return policy


def _replay_one(path, swift, jax_engine, args) -> bool:
    from parity.replay import replay
    from parity.trace import read_trace

    trace = read_trace(path)
    if args.step is not None:
        return _show_step(trace, swift, jax_engine, args.step)
    result = replay(trace, swift, jax_engine, state_every=args.state_every)
    if result.ok:
        print(f"ok   {path}: {result.steps_run} steps")
        return True
    print(result.divergence.report())
    return False


def _show_step(trace, swift, jax_engine, step) -> bool:
    """Replays to ``step`` and prints both engines' view of it, agreeing or not."""
    import json as _json

    from parity.compare import compare_outcomes, state_differences
    from parity.names import action_name
    from parity.replay import replay

    if not 0 <= step < len(trace.steps):
        raise SystemExit(f"--step {step} is outside 0..{len(trace.steps) - 1}")
    result = replay(trace, swift, jax_engine, stop_after=step - 1) if step > 0 else None
    if result is not None and not result.ok:
        print(f"(diverged before step {step})")
        print(result.divergence.report())
        return False
    for engine in (swift, jax_engine):
        if step == 0:
            engine.start(trace.seed, trace.start_state)
    before = swift.get_state()
    action = trace.steps[step].action
    left, right = swift.step(action), jax_engine.step(action)
    diffs = compare_outcomes(left, right)
    if not diffs and not left.rejected:
        diffs = state_differences(swift.get_state(), jax_engine.get_state())
    print(f"{trace.name} step {step}, action {action_name(action)}")
    print("state before the step (swift getState):")
    print(_json.dumps(before, sort_keys=True))
    print(f"swift: reward {left.reward} done {left.done} rejected {left.rejected}")
    print(f"jax:   reward {right.reward} done {right.done} rejected {right.rejected}")
    if left.components:
        for name, value in left.components.items():
            other = right.components.get(name) if right.components else None
            print(f"  {name}: swift {value} jax {other}")
    print(
        "\n".join(d.line("swift", "jax") for d in diffs) if diffs else "engines agree on this step"
    )
    return not diffs


def cmd_replay(args) -> int:
    from parity.engines import make_engine
    from parity.trace import find_traces

    paths = find_traces(args.traces)
    if args.step is not None and len(paths) != 1:
        raise SystemExit("replay --step needs exactly one trace file")
    engines = [make_engine(name, _binary(args)) for name in args.engines.split(",")]
    swift, other = engines[0], engines[1] if len(engines) > 1 else None
    began, failures = time.perf_counter(), 0
    try:
        for path in paths:
            failures += not _replay_one(path, swift, other, args)
    finally:
        for engine in engines:
            engine.close()
    print(
        f"{len(paths) - failures}/{len(paths)} traces agree ({time.perf_counter() - began:.1f} s)"
    )
    return 1 if failures else 0


def cmd_fuzz(args) -> int:
    from parity.fuzz import FuzzConfig, fuzz

    config = FuzzConfig(
        episodes=args.episodes,
        batch=args.batch,
        max_steps=args.max_steps,
        seed=args.seed,
        rich_fraction=args.rich_fraction,
        state_every=args.state_every,
        workers=args.workers,
        found_dir=Path(args.found_dir) if args.found_dir else None,
    )
    result = fuzz(config, _binary(args))
    print(
        f"fuzz: {result.episodes} episodes, {result.steps} steps, "
        f"{len(result.divergences)} divergences, {result.wall_seconds:.1f} s wall "
        f"({result.steps / max(result.wall_seconds, 1e-9):.0f} steps/s; "
        f"jax loop done after {result.jax_seconds:.1f} s, "
        f"swift workers busy {result.swift_seconds:.1f} s)"
    )
    for divergence in result.divergences:
        print(divergence.report())
    if args.coverage:
        print(result.coverage.table())
    return 1 if result.divergences else 0


def cmd_coverage(args) -> int:
    from parity.coverage import Coverage
    from parity.engines import make_engine
    from parity.replay import replay
    from parity.trace import find_traces, read_trace

    engine = make_engine(args.engine, _binary(args))
    coverage = Coverage()
    try:
        for path in find_traces(args.traces):
            trace = read_trace(path)
            actions = trace.actions

            def count(step, outcome, coverage=coverage, actions=actions):
                if step < 0:
                    coverage.add_start(outcome.obs)
                elif not outcome.rejected:
                    coverage.add_step(actions[step], outcome.obs, outcome.components, outcome.done)

            replay(trace, engine, check_expectations=False, state_every=0, on_step=count)
    finally:
        engine.close()
    print(coverage.table())
    if args.json:
        Path(args.json).write_text(json.dumps(coverage.to_json(), indent=1))
    return 0


def cmd_corpus(args) -> int:
    from parity.corpus import TRACES, build
    from parity.engines import make_engine

    engine = make_engine("swift", _binary(args))
    try:
        build(engine, Path(args.out) if args.out else TRACES)
    finally:
        engine.close()
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m parity", description=__doc__)
    parser.add_argument(
        "--binary", help="the Swift CLI (default: $HACKMATRIX_BINARY or the ./swift-build output)"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("record", help="play a policy in one engine and write a trace")
    p.add_argument("--engine", choices=("swift", "jax"), default="swift")
    p.add_argument("--seed", type=int)
    p.add_argument("--state", help="a JSON file with a setState state to start from")
    p.add_argument(
        "--policy", choices=("random", "greedy", "script", "checkpoint"), default="random"
    )
    p.add_argument(
        "--policy-seed",
        type=int,
        default=0,
        help="seed of the random/greedy policies and of --sample",
    )
    p.add_argument("--actions", help="comma-separated actions for --policy script")
    p.add_argument(
        "--checkpoint",
        help="for --policy checkpoint: a params_*.npz, checkpoint_*.pkl or run directory",
    )
    add_sampling_flags(
        p,
        greedy_help="checkpoint policy: argmax of the masked logits (the default)",
        sample_help="checkpoint policy: sample from the masked softmax (seeded by --policy-seed)",
    )
    p.add_argument("--max-steps", type=int, default=1000)
    p.add_argument("--note", default="")
    p.add_argument("--out", required=True)
    p.set_defaults(run=cmd_record)

    p = sub.add_parser(
        "replay", help="replay traces through both engines, stop at the first divergence"
    )
    p.add_argument("traces", nargs="+", help="trace files or folders")
    p.add_argument("--step", type=int, help="show step N of a single trace in detail")
    p.add_argument(
        "--engines",
        default="swift,jax",
        help="reference first; one name only checks that engine against the recording",
    )
    p.add_argument(
        "--state-every", type=int, default=1, help="compare full states every k steps (0: never)"
    )
    p.set_defaults(run=cmd_replay)

    p = sub.add_parser("fuzz", help="differential fuzzing, batched on the JAX side")
    p.add_argument("--episodes", type=int, default=256)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--max-steps", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rich-fraction", type=float, default=0.5)
    p.add_argument("--state-every", type=int, default=25)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--found-dir", default=str(Path(__file__).resolve().parent / "traces" / "found"))
    p.add_argument("--coverage", action="store_true", help="print the coverage table")
    p.set_defaults(run=cmd_fuzz)

    p = sub.add_parser("coverage", help="what a set of traces exercises")
    p.add_argument("traces", nargs="+")
    p.add_argument("--engine", choices=("swift", "jax"), default="swift")
    p.add_argument("--json", help="also write the counts here")
    p.set_defaults(run=cmd_coverage)

    p = sub.add_parser("corpus", help="(re)build parity/traces from the Swift engine")
    p.add_argument("--out", help="folder (default parity/traces)")
    p.set_defaults(run=cmd_corpus)

    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
