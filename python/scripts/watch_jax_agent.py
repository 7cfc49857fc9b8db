#!/usr/bin/env python3
"""Watch a JAX-trained policy play HackMatrix.

The same as the installed `hackmatrix-watch` command; the code and its help live in
`hackmatrix/commands/watch_jax.py`. `--help` lists the options.
"""

import sys

from hackmatrix.commands.watch_jax import main

if __name__ == "__main__":
    sys.exit(main())
