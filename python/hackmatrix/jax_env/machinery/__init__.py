"""The engine's machinery, free of game rules: how the rules run fast under jit and vmap.

- `form`: the one switch between the step's two compiled forms, gathered
  (CPU) and masked (accelerators: no data-dependent loops), same results.
- `batching`: run a costly per-env function only for the envs that need it.
- `trees`: one pytree select.
- `bits`: 36-cell sets as two uint32 words (`CellSet`, with `& | ~`) and the
  breadth-first searches over them.
- `slots`: counting over the 35 enemy/transmission slots with popcounts.
- `lists`: list semantics (stable removal) over fixed slots.
- `history`: a ring of packed rows (the UNDO snapshots' storage).
"""
