#!/usr/bin/env python3
"""Play HackMatrix yourself, on the Swift or the JAX engine.

The same as the installed `hackmatrix-play` command; the code and its help live in
`hackmatrix/commands/play.py`. `--help` lists the options.
"""

import sys

from hackmatrix.commands.play import main

if __name__ == "__main__":
    sys.exit(main())
