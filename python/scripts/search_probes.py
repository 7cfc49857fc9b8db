#!/usr/bin/env python3
"""Diagnostics of the play-time search that are not players: `unfair-root` (the evaluation
with the true hidden board, a yardstick of what fairness costs), `siphon-labels` (how
often the search siphons where the network does), `q-gaps` (whether the search's moves,
where they differ from the network's, win more of the true game, by the search's Q-gap) and
`prior-shape` (how sure each network's prior is, against what the search can overturn).

The code and its help live in `hackmatrix/commands/search_probes.py`.
"""

import sys

from hackmatrix.commands.search_probes import main

if __name__ == "__main__":
    sys.exit(main())
