"""Fair planning at play time (specs/search.md): a Gumbel MuZero search over the JAX engine.

`sampler` draws the root a search may start from out of what the player knows;
`search` runs the batched search from such roots with a trained network's
policy and value, and turns it into a policy any game-playing tool can use.
"""
