#!/usr/bin/env python3
"""Where a checkpoint's PPO gradient goes: its policy, value and entropy parts, over all
layers and over the layers the two heads share, and how often the clip bites.

The same as the installed `hackmatrix-gradients` command; the code and its help live in
`hackmatrix/commands/gradients.py`. `--help` lists the options.
"""

import sys

from hackmatrix.commands.gradients import main

if __name__ == "__main__":
    sys.exit(main())
