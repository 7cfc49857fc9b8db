"""The search is fair (specs/search.md §4): what it does depends on what the player knows only.

The defining test: pairs of states that give the same player's view (the JSON
observation with its cryptog hints, the action mask, the tracked counters and
the UNDO snapshots as the player saw them) but differ in every hidden field and
the seed produce bit-identical search outputs (action, improved policy, Q,
value, visits) under the same search key. The pairs come from mid-game states
with question blocks, hidden cryptogs, transmissions in flight and pending
siphon transmissions (states.jsonl.gz, make_states.py; pairs.py builds the
twins). Alongside: the sampler keeps the observation exactly, its roots are
valid states, and the search only ever picks a legal action (with the trained reward and
leaf rollouts, §3.4 and §3.6, and with several worlds a tree, §3.5).
"""

from __future__ import annotations

from collections import Counter

import jax
import numpy as np
import pytest

from hackmatrix import jax_env
from hackmatrix.pretrained import pretrained_params
from hackmatrix.purejaxrl.checkpoint import load_policy
from hackmatrix.search import sampler
from hackmatrix.search.search import SearchConfig, Searcher, tree_reward_for_run

from . import pairs

TWINS_PER_STATE = 2
# The defining test's search walks every path a search can take with one world: two
# roots, the trained reward in the tree (§3.4, its shapers' carries) and leaf rollouts
# (§3.6, two greedy steps from every valued node). The env's own reward in the tree is
# the several-worlds test's below.
CONFIG = SearchConfig(
    num_simulations=4,
    max_num_considered_actions=4,
    num_roots=2,
    tree_reward=tree_reward_for_run({"program_bonus": 4.0, "siphon_pay_on_use": True}),
    leaf_rollout=2,
)


def _bits(x) -> np.ndarray:
    x = np.asarray(x)
    return x.view(np.uint32) if x.dtype == np.float32 else x


def _same_leaves(a, b) -> bool:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(la) == len(lb) and all(np.array_equal(_bits(x), _bits(y)) for x, y in zip(la, lb))


@pytest.fixture(scope="module")
def twins():
    """(A states, B states, A JSON, B JSON, what was varied, pairs dropped) over all states."""
    masks = jax.jit(jax.vmap(jax_env.action_mask))
    a_json, b_json, a_states, b_states = [], [], [], []
    varied: Counter = Counter()
    dropped = 0
    for i, s in enumerate(pairs.states()):
        a = jax_env.state_from_json(s)
        for k in range(TWINS_PER_STATE):
            for attempt in range(8):
                trial: Counter = Counter()
                t, b = pairs.twin(s, 1000 * i + 10 * k + attempt, trial)
                # A hidden cryptog moved into the diagonal ring (CRASH) or off a block
                # (DEBUG) changes the mask the env shows: then the player could tell.
                if np.array_equal(masks(pairs.stack([a]))[0], masks(pairs.stack([b]))[0]):
                    break
            else:
                dropped += 1
                continue
            varied.update(trial)
            a_json.append(s)
            b_json.append(t)
            a_states.append(a)
            b_states.append(b)
    return pairs.stack(a_states), pairs.stack(b_states), a_json, b_json, varied, dropped


@pytest.fixture(scope="module")
def network_and_params():
    """The policy that ships with the project: a real prior and value, whose tree a leak
    of the hidden board or the seed would reach (a random network's noise could mask it)."""
    policy = load_policy(pretrained_params())
    return policy.network, policy.params


def test_twins_look_the_same_and_differ_in_every_hidden_field(twins):
    a, b, a_json, b_json, varied, dropped = twins
    n = len(a_json)
    assert n >= 56 and dropped <= n // 8, (n, dropped)
    for s, t in zip(a_json, b_json):
        assert pairs.player_view(s) == pairs.player_view(t)
        assert s != t
    masks = jax.jit(jax.vmap(jax_env.action_mask))
    assert np.array_equal(masks(a), masks(b))
    obs = jax.jit(jax.vmap(lambda s: jax_env.flatten_observation(jax_env.observe(s))))
    assert np.array_equal(_bits(obs(a)), _bits(obs(b)))
    # Every kind of hidden field was varied, many times over.
    for field in (
        "seed",
        "question_contents",
        "resource_under_block",
        "hidden_cryptog_cell",
        "hidden_cryptog_hp",
        "transmission_type",
        "enemy_from_scheduled",
        "transmission_from_scheduled",
        "enemy_order",
        "snapshot",
        "below_json",
    ):
        assert varied[field] >= 10, (field, varied)
    print(f"\n{n} pairs ({dropped} dropped for a different mask); varied: {dict(varied)}")


def test_projection_and_sampled_roots_are_identical(twins):
    a, b, *_ = twins
    assert _same_leaves(
        jax.jit(jax.vmap(sampler.project))(a), jax.jit(jax.vmap(sampler.project))(b)
    )
    keys = jax.random.split(jax.random.PRNGKey(3), a.stage.shape[0])
    sample = jax.jit(jax.vmap(sampler.sample_root))
    root_a, root_b = sample(keys, a), sample(keys, b)
    assert _same_leaves(root_a, root_b)
    # ... and a different key gives a different root (the sampler does draw).
    other = sample(jax.random.split(jax.random.PRNGKey(4), a.stage.shape[0]), a)
    assert not np.array_equal(np.asarray(other.seed), np.asarray(root_a.seed))


def test_sampled_roots_keep_the_observation_and_are_valid_states(twins):
    a, b, a_json, *_ = twins
    keys = jax.random.split(jax.random.PRNGKey(5), a.stage.shape[0])
    roots = jax.jit(jax.vmap(sampler.sample_root))(keys, a)
    observe = jax.jit(jax.vmap(jax_env.observe))
    for part, x in observe(a).items():
        assert np.array_equal(_bits(x), _bits(observe(roots)[part])), part
    for i in range(len(a_json)):
        root = jax.tree_util.tree_map(lambda x, i=i: x[i], roots)
        d = jax_env.state_to_json(root)
        again = jax_env.state_from_json(d)  # validates as setState does
        assert jax_env.state_to_json(again) == d
        assert _same_leaves(again, root)  # canonical: nothing stale, lists in order
        assert pairs.player_view(d) == pairs.player_view(a_json[i])
        # A stage's block programs are all different (game-rules.md §10.3): a question
        # block draws one no program block shows, and no two draw the same.
        shown = {k["programType"] for k in d["blocks"] if k["type"] == "program"}
        drawn = [k.get("programType") for k in d["blocks"] if k["type"] == "question"]
        drawn = [p for p in drawn if p is not None]
        assert len(set(drawn)) == len(drawn) and not set(drawn) & shown, d["blocks"]


@pytest.fixture(scope="module")
def searched(twins, network_and_params):
    a, b, *_ = twins
    network, params = network_and_params
    searcher = Searcher(network, CONFIG)
    keys = jax.random.split(jax.random.PRNGKey(11), a.stage.shape[0])
    return searcher.search(keys, a, params), searcher.search(keys, b, params)


def test_search_outputs_are_bit_identical_for_twins(searched):
    out_a, out_b = searched
    for name, x, y in zip(out_a._fields, out_a, out_b):
        assert np.array_equal(_bits(x), _bits(y)), name
    assert np.all(np.isfinite(np.asarray(out_a.weights)))


def test_the_search_picks_only_legal_actions(twins, searched):
    a, *_ = twins
    out_a, _ = searched
    mask = np.asarray(jax.jit(jax.vmap(jax_env.action_mask))(a))
    rows = np.arange(mask.shape[0])
    assert mask[rows, np.asarray(out_a.action)].all()
    weights = np.asarray(out_a.weights)
    assert np.all(weights[~mask] == 0.0)
    assert np.allclose(weights.sum(-1), 1.0, atol=1e-5)


WORLDS_CONFIG = SearchConfig(num_simulations=4, max_num_considered_actions=4, worlds=2)


def test_a_tree_of_several_worlds_is_fair_and_legal(twins, network_and_params):
    """§3.5: each tree steps several sampled states at once; they are all drawn from the
    player's view, so twins still search bit for bit alike."""
    a, b, *_ = twins
    network, params = network_and_params
    searcher = Searcher(network, WORLDS_CONFIG)
    keys = jax.random.split(jax.random.PRNGKey(12), a.stage.shape[0])
    out_a, out_b = searcher.search(keys, a, params), searcher.search(keys, b, params)
    for name, x, y in zip(out_a._fields, out_a, out_b):
        assert np.array_equal(_bits(x), _bits(y)), name
    mask = np.asarray(jax.jit(jax.vmap(jax_env.action_mask))(a))
    assert mask[np.arange(mask.shape[0]), np.asarray(out_a.action)].all()
    assert np.all(np.asarray(out_a.weights)[~mask] == 0.0)
