#!/usr/bin/env python3
"""Write docs/reference/trainer-flags.md from the trainer's option declarations.

Every flag, its section, default, the shipped presets' values and its help come from
`hackmatrix.purejaxrl.config` (the one place an option is written down) and the preset
files; tests/purejaxrl/test_presets.py fails while the committed file is stale. Run it
after changing an option or a preset:

    .venv/bin/python python/scripts/gen_flag_reference.py          # write the file
    .venv/bin/python python/scripts/gen_flag_reference.py --check  # exit 1 if stale
"""

import argparse
import sys
from pathlib import Path

from hackmatrix.purejaxrl.resolve import flag_reference_markdown

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "trainer-flags.md"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    parser.add_argument("--output", type=Path, default=REFERENCE, help="where to write it")
    args = parser.parse_args(argv)
    text = flag_reference_markdown()
    if args.check:
        current = args.output.read_text() if args.output.is_file() else ""
        if current != text:
            print(f"{args.output} is stale: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
