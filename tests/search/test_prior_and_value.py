"""One network's prior with another's value (search/prior_and_value.py, specs/search.md §6).

The search reads a network only through `_network_outputs` (at its roots and in
its recurrent function), so these tests pin that reading: the prior network's
masked logits and the value network's value (scaled as the value network's run
scales it), and the evaluation flag that builds the pair.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from hackmatrix import jax_env
from hackmatrix.analysis.policies import EvaluationError, Policy, with_value_of
from hackmatrix.commands import evaluate
from hackmatrix.purejaxrl.network import make_network
from hackmatrix.search.prior_and_value import PriorAndValue
from hackmatrix.search.search import SearchConfig, _network_outputs


@pytest.fixture(scope="module")
def two():
    """Two different tiny networks (different shapes), their params and a batch of states."""
    prior, value = make_network(8, 1), make_network(16, 2)
    zeros = jnp.zeros((1, jax_env.env.OBS_SIZE))
    prior_params = prior.init(jax.random.PRNGKey(1), zeros)
    value_params = value.init(jax.random.PRNGKey(2), zeros)
    states = jax.vmap(lambda k: jax_env.reset(k)[1])(jax.random.split(jax.random.PRNGKey(3), 4))
    return prior, value, prior_params, value_params, states


def test_apply_takes_the_prior_from_one_and_the_value_from_the_other(two):
    prior, value, prior_params, value_params, states = two
    obs = jax.vmap(lambda s: jax_env.flatten_observation(jax_env.observe(s)))(states)
    logits, v = PriorAndValue(prior, value).apply((prior_params, value_params), obs)
    want_logits, prior_value = prior.apply(prior_params, obs)
    value_logits, want_value = value.apply(value_params, obs)
    np.testing.assert_array_equal(logits, want_logits)
    np.testing.assert_array_equal(v, want_value)
    assert not np.allclose(v, prior_value)  # the two heads really differ
    assert not np.allclose(logits, value_logits)


@pytest.mark.parametrize("value_target", ["raw", "symlog"])
def test_the_search_reads_the_prior_and_the_value_it_is_given(two, value_target):
    prior, value, prior_params, value_params, states = two
    config = SearchConfig(value_target=value_target)
    mask = jax.vmap(jax_env.action_mask)(states)
    pair = PriorAndValue(prior, value)
    logits, v = _network_outputs(pair, config, (prior_params, value_params), states, mask)
    alone_logits, _ = _network_outputs(prior, config, prior_params, states, mask)
    _, alone_value = _network_outputs(value, config, value_params, states, mask)
    np.testing.assert_array_equal(logits, alone_logits)
    np.testing.assert_array_equal(v, alone_value)


def test_a_pair_of_the_same_network_is_that_network(two):
    prior, _, prior_params, _, states = two
    config = SearchConfig()
    mask = jax.vmap(jax_env.action_mask)(states)
    pair = _network_outputs(PriorAndValue(prior, prior), config, (prior_params,) * 2, states, mask)
    alone = _network_outputs(prior, config, prior_params, states, mask)
    for a, b in zip(pair, alone):
        np.testing.assert_array_equal(a, b)


def test_the_pair_is_a_hashable_static_argument(two):
    prior, value, *_ = two
    assert hash(PriorAndValue(prior, value)) == hash(PriorAndValue(prior, value))
    assert PriorAndValue(prior, value) != PriorAndValue(value, prior)


def test_the_pair_policy_takes_its_config_from_the_value(two):
    prior, value, prior_params, value_params, _ = two
    a = Policy("a", prior, prior_params, source="a.npz", config={"gamma": 0.99})
    b = Policy("b", value, value_params, source="b.npz", config={"gamma": 0.995})
    both = with_value_of(a, b)
    assert both.label == "a + value of b"
    assert both.config == {"gamma": 0.995}  # discount, value scale, tree reward: the value's
    assert both.source == "a.npz"
    assert both.params == (prior_params, value_params)
    with pytest.raises(EvaluationError, match="not random"):
        with_value_of(a, Policy("random"))


def test_the_flag_needs_a_search_and_a_trained_network(capsys, tmp_path):
    args = evaluate.parse_args(["p.npz", "--search", "16", "--search-value-from", "v.npz"])
    assert args.search_value_from == "v.npz"
    assert evaluate.search_value_policy(evaluate.parse_args(["p.npz", "--search", "4"])) is None
    with pytest.raises(SystemExit) as exit_:
        evaluate.parse_args(["p.npz", "--search-value-from", "v.npz"])
    assert exit_.value.code == 2
    assert "needs --search" in capsys.readouterr().err
    with pytest.raises(EvaluationError, match="not random"):
        evaluate.search_value_policy(
            evaluate.parse_args(["p.npz", "--search", "4", "--search-value-from", "random"])
        )
    missing = str(tmp_path / "nowhere.npz")
    assert evaluate.main(["pretrained", "--search", "4", "--search-value-from", missing]) == 2
    assert "nowhere.npz" in capsys.readouterr().err
