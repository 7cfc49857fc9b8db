"""randomness.md test vectors."""

import jax
import numpy as np
import pytest

from hackmatrix.jax_env.rng import draw, mix32, rank_keys


@pytest.mark.parametrize(
    "x, expected", [(0, 0x00000000), (1, 0x86D2FA73), (0xFFFFFFFF, 0x99B5E683)]
)
def test_mix32_vectors(x, expected):
    assert int(mix32(np.uint32(x))) == expected


@pytest.mark.parametrize(
    "args, expected",
    [
        ((0, 0, 0, 0), 0xEF90AB90),
        ((0, 1, 0, 0), 0x9B3F47AE),
        ((12345, 3, 7, 35), 0x403A7F9A),
        ((0xDEADBEEF, 17, 1000, 5), 0x0EE91F12),
    ],
)
def test_draw_vectors(args, expected):
    assert int(draw(*(np.uint32(a) for a in args))) == expected
    assert int(jax.jit(draw)(*(np.uint32(a) for a in args))) == expected


def test_rank_keys_breaks_ties_by_index_and_skips_non_candidates():
    keys = np.array([5, 3, 5, 1, 3], np.uint32)
    candidate = np.array([True, True, True, False, True])
    rank = np.asarray(rank_keys(keys, candidate))
    assert list(rank[candidate]) == [2, 0, 3, 1]
    assert rank[3] >= 4
