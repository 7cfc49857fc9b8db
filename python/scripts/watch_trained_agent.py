#!/usr/bin/env python3
"""Watch an SB3 MaskablePPO model play HackMatrix on the Swift engine.

The same as the installed `hackmatrix-watch-sb3` command; the code and its help live in
`hackmatrix/commands/watch_sb3.py`. `--help` lists the options.
"""

import sys

from hackmatrix.commands.watch_sb3 import main

if __name__ == "__main__":
    sys.exit(main())
