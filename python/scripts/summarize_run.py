#!/usr/bin/env python3
"""What a training run achieved, from its metrics.jsonl: trends, peak KL and clip, the last
evaluations and the health warnings.

The same as the installed `hackmatrix-summary` command; the code and its help live in
`hackmatrix/commands/summary.py`. `--help` lists the options.
"""

import sys

from hackmatrix.commands.summary import main

if __name__ == "__main__":
    sys.exit(main())
