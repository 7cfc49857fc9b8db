"""A tree of several sampled worlds (specs/search.md §3.5): how a node combines its worlds'
masks, priors and values, and the options' checks. The search itself is held fair by
test_fairness.py."""

import jax.numpy as jnp
import numpy as np
import pytest

from hackmatrix.search.search import SearchConfig, common_mask, tree_reward_for_run, world_mean


def test_the_common_mask_is_what_every_running_world_allows():
    masks = jnp.array([[[1, 1, 0, 1], [1, 0, 1, 1], [0, 0, 0, 0]]], bool)
    ended = jnp.array([[False, False, True]])  # the ended world's empty mask is ignored
    assert np.asarray(common_mask(masks, ended)).tolist() == [[True, False, False, True]]


def test_with_nothing_legal_everywhere_the_mask_is_what_any_running_world_allows():
    masks = jnp.array([[[1, 0, 0], [0, 1, 0]]], bool)
    ended = jnp.array([[False, False]])
    assert np.asarray(common_mask(masks, ended)).tolist() == [[True, True, False]]


def test_when_every_world_has_ended_nothing_is_legal():
    masks = jnp.zeros((1, 2, 3), bool)
    assert not np.asarray(common_mask(masks, jnp.array([[True, True]]))).any()


def test_world_mean_averages_the_running_worlds_only():
    values = jnp.array([[1.0, 3.0, 100.0]])
    ended = jnp.array([[False, False, True]])
    assert float(world_mean(values, ended)[0]) == pytest.approx(2.0)
    logits = jnp.array([[[0.0, 2.0], [2.0, 4.0], [9.0, 9.0]]])
    assert np.allclose(world_mean(logits, ended), [[1.0, 3.0]])
    every = jnp.array([[True, True, True]])  # none running: the plain mean
    assert float(world_mean(values, every)[0]) == pytest.approx(104.0 / 3)


def test_worlds_are_checked():
    with pytest.raises(ValueError, match="worlds must be >= 1"):
        SearchConfig(worlds=0)
    tree = tree_reward_for_run({"program_bonus": 4.0, "siphon_pay_on_use": True})
    assert tree is not None
    with pytest.raises(ValueError, match="env's reward"):
        SearchConfig(worlds=2, tree_reward=tree)
    assert SearchConfig(worlds=4).worlds == 4
