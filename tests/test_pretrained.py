"""The trained policy that ships with the project (python/hackmatrix/pretrained/).

It must load everywhere a run's parameters load, name the network it was trained
with, match the provenance recorded beside it, and be what the model card
describes; the tools' --pretrained flags must reach it.
"""

from __future__ import annotations

import hashlib
import json

import jax
import numpy as np
import pytest

from hackmatrix.pretrained import (
    MODEL_CARD,
    PRETRAINED_CONFIG,
    PRETRAINED_NAME,
    PRETRAINED_PARAMS,
    pretrained_params,
)
from hackmatrix.purejaxrl.checkpoint import load_policy, stored_config
from hackmatrix.purejaxrl.network import OBS_SIZE, network_config_from_params


@pytest.fixture(scope="module")
def record():
    return json.loads(PRETRAINED_CONFIG.read_text())


def test_the_files_ship_and_are_small():
    assert pretrained_params() == PRETRAINED_PARAMS
    # git-friendly: a grid network is ~0.6 MiB, one with a value trunk of its own ~1.2 MiB
    assert PRETRAINED_PARAMS.stat().st_size < 2 * 1024 * 1024
    assert MODEL_CARD.is_file()


def test_provenance_matches_the_parameters(record):
    digest = hashlib.sha256(PRETRAINED_PARAMS.read_bytes()).hexdigest()
    assert record["source"]["params_sha256"] == digest
    assert record["source"]["env_steps"] > 0


def test_the_model_card_describes_this_policy(record):
    card = MODEL_CARD.read_text()
    source = record["source"]
    # A replaced policy without an updated card fails here.
    assert source["params_sha256"][:12] in card
    assert f"{source['env_steps']:,}" in card
    assert source["run"] in card
    if "value_source" in record:  # a value from another run (ship_policy.py --value-from)
        assert record["value_source"]["run"] in card
        assert record["config"]["value_trunk"] == "separate"


def test_it_loads_as_the_network_it_was_trained_with(record):
    assert stored_config(PRETRAINED_PARAMS) == record["config"]
    policy = load_policy(PRETRAINED_PARAMS)
    detected = network_config_from_params(policy.params)
    assert detected["network"] == record["config"]["network"]
    assert detected["hidden_dim"] == record["config"]["hidden_dim"]
    logits, value = policy.network.apply(policy.params, np.zeros((2, OBS_SIZE), np.float32))
    assert logits.shape == (2, 28) and value.shape == (2,)
    assert np.all(np.isfinite(jax.device_get(logits)))


def test_the_tools_reach_it():
    from hackmatrix.analysis.policies import load_policy_spec
    from hackmatrix.commands import evaluate, play, watch_jax

    assert load_policy_spec(PRETRAINED_NAME).label == PRETRAINED_NAME
    assert evaluate.policy_texts(evaluate.parse_args(["--pretrained"])) == [PRETRAINED_NAME]
    assert watch_jax.parse_args(["--pretrained"]).pretrained
    assert play.parse_args(["--hint"]).hint == PRETRAINED_NAME
    assert play.parse_args(["--hint", "run"]).hint == "run"
    with pytest.raises(SystemExit):
        watch_jax.parse_args(["--pretrained", "--latest"])
    with pytest.raises(SystemExit):
        evaluate.parse_args(["--pretrained", "random"])
