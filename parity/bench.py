"""Parity harness throughput: corpus replay (lock-step, both engines) and fuzzing.

Measures, on whatever machine runs it (the JAX side on CPU):

- corpus replay, Swift vs JAX, full state compared after every step;
- the same with states compared only at the end of each trace;
- corpus replay through Swift alone against the recorded expectations;
- differential fuzzing (vmapped JAX batch, pipelined Swift workers).

JAX compilation is excluded where it can be (a warm-up trace first; the
persistent compile cache for the fuzz batch). Prints a table and writes JSON
(default bench_results/bench_parity.json).

    python -m parity.bench --fuzz-episodes 512      # from the repository root
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

from parity.corpus import TRACES
from parity.engines import JaxAdapter, SwiftAdapter
from parity.fuzz import FuzzConfig, fuzz
from parity.replay import replay
from parity.trace import find_traces, read_trace


def time_corpus(traces, left, right, state_every):
    began, steps = time.perf_counter(), 0
    for trace in traces:
        result = replay(trace, left, right, state_every=state_every)
        if not result.ok:
            raise SystemExit(result.divergence.report())
        steps += result.steps_run
    seconds = time.perf_counter() - began
    return {
        "traces": len(traces),
        "steps": steps,
        "seconds": round(seconds, 2),
        "steps_per_s": round(steps / seconds, 1),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m parity.bench", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--binary", help="Swift CLI (default: $HACKMATRIX_BINARY or the ./swift-build output)"
    )
    parser.add_argument("--fuzz-episodes", type=int, default=512)
    parser.add_argument("--fuzz-batch", type=int, default=64)
    parser.add_argument("--fuzz-max-steps", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--out", default="bench_results/bench_parity.json")
    args = parser.parse_args(argv)

    traces = [read_trace(p) for p in find_traces([TRACES])]
    swift, jax_engine = SwiftAdapter(args.binary), JaxAdapter()
    replay(traces[0], swift, jax_engine)  # compile the JAX step before timing
    rows = {
        "corpus, swift vs jax, state every step": time_corpus(traces, swift, jax_engine, 1),
        "corpus, swift vs jax, state at the end": time_corpus(traces, swift, jax_engine, 10**9),
        "corpus, swift alone vs recording": time_corpus(traces, swift, None, 0),
    }
    swift.close()
    config = FuzzConfig(
        episodes=args.fuzz_episodes,
        batch=args.fuzz_batch,
        max_steps=args.fuzz_max_steps,
        seed=args.seed,
        workers=args.workers,
        found_dir=TRACES / "found",
    )
    result = fuzz(config, args.binary)
    rows[f"fuzz, batch {args.fuzz_batch}, {args.workers} swift workers"] = {
        "episodes": result.episodes,
        "steps": result.steps,
        "seconds": round(result.wall_seconds, 2),
        "steps_per_s": round(result.steps / result.wall_seconds, 1),
        "divergences": len(result.divergences),
    }

    print("| measurement | steps | seconds | steps/s |\n| --- | --- | --- | --- |")
    for name, row in rows.items():
        print(f"| {name} | {row['steps']} | {row['seconds']} | {row['steps_per_s']} |")
    for divergence in result.divergences:
        print(divergence.report())
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
                "results": rows,
                "coverage": result.coverage.to_json(),
            },
            indent=2,
        )
    )
    print(f"wrote {out}")
    return 1 if result.divergences else 0


if __name__ == "__main__":
    sys.exit(main())
