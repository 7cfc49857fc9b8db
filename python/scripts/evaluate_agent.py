#!/usr/bin/env python3
"""See what an agent does: play a fixed set of games and report its behaviour.

The same as the installed `hackmatrix-evaluate` command; the code and its help live in
`hackmatrix/commands/evaluate.py`. `--help` lists the options.
"""

import sys

from hackmatrix.commands.evaluate import main

if __name__ == "__main__":
    sys.exit(main())
