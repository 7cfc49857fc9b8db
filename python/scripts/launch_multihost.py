#!/usr/bin/env python3
"""Start N trainer processes on this machine as one multi-host run.

The same as the installed `hackmatrix-launch-multihost` command; the code and its help live in
`hackmatrix/commands/launch_multihost.py`. `--help` lists the options.
"""

import sys

from hackmatrix.commands.launch_multihost import main

if __name__ == "__main__":
    sys.exit(main())
