"""hackmatrix.hlo_stats reads fusions and while loops from a compiled program's HLO."""

import jax
import jax.numpy as jnp

from hackmatrix.hlo_stats import hlo_stats


def _program(x: jax.Array) -> jax.Array:
    x = jax.lax.fori_loop(0, 5, lambda i, v: v * 2 + i, x)  # a known trip count
    return jax.lax.while_loop(lambda v: jnp.sum(v) < 1000, lambda v: v * 3 + 1, x)  # data's


def test_counts_fixed_and_data_dependent_loops():
    text = jax.jit(_program).lower(jnp.ones(8, jnp.int32)).compile().as_text()
    stats = hlo_stats(text)
    assert stats.while_loops == 2
    assert stats.data_dependent_loops == 1
    assert stats.fixed_loops == 1 and stats.fixed_trip_counts == [5]
    assert stats.fusions >= 1 and stats.instructions > stats.fusions
    assert stats.launches >= stats.fusions  # the fixed loop's body runs 5 times
    assert "fusion" in stats.summary()
