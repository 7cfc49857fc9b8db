"""`--value-trunk separate` (training.md §2.3): the grid network's value head reads a copy
of every layer of its own, so neither loss moves the other's features; and
`separate-reads-policy`, whose value head also reads the policy trunk's output through a
stop-gradient (specs/experiments/77).

The network (names, initial values, gradients), how it is found from bare parameters,
`--init-from` a shared checkpoint (the copy computes exactly the source), the refusals,
the value-only warm-up, and real runs through the CLI: a fresh one from a shared run's
weights, its resume, and its saves loading where a policy loads.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import schedule_config, standin_run
from flax.training.train_state import TrainState

from hackmatrix.purejaxrl import cli
from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl.checkpoint import (
    CheckpointError,
    load_initial_params,
    load_params,
    load_policy,
    save_params_npz,
    stored_config,
)
from hackmatrix.purejaxrl.network import (
    OBS_SIZE,
    VALUE_PREFIX,
    describe_network,
    make_network,
    network_config_from_params,
    network_for_params,
    value_only_layers,
    with_critic_reading_policy,
    with_value_from,
    with_value_trunk_copied,
)
from hackmatrix.purejaxrl.train import apply_gradients_value_only, make_optimizer

TRUNK = ("cell_encoder", "conv_0", "conv_1", "cell_out", "trunk_0", "trunk_1")


def init(network, seed=0):
    return network.init(jax.random.PRNGKey(seed), jnp.zeros((1, OBS_SIZE)))


def observations(n=6, seed=3):
    return jax.random.uniform(jax.random.PRNGKey(seed), (n, OBS_SIZE))


def leaves_equal(a, b) -> bool:
    pairs = zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b))
    return all(np.array_equal(x, y) for x, y in pairs)


@pytest.fixture(scope="module")
def shared_and_separate():
    shared = make_network(32, 2, network="grid")
    separate = make_network(32, 2, network="grid", value_trunk="separate")
    return shared, init(shared), separate, init(separate)


# ------------------------------------------------------------------ the network


def test_the_value_gets_a_copy_of_every_layer_and_the_shared_ones_keep_their_values(
    shared_and_separate,
):
    _, shared_params, _, params = shared_and_separate
    layers = params["params"]
    assert set(layers) == set(shared_params["params"]) | {VALUE_PREFIX + n for n in TRUNK}
    for name, layer in shared_params["params"].items():
        assert leaves_equal(layers[name], layer), name  # names and initial values as before
    # The copy is initialised on its own, not as the policy's trunk.
    assert not leaves_equal(layers["value_trunk_0"], layers["trunk_0"])


def test_the_policy_is_the_shared_networks_and_the_value_is_not(shared_and_separate):
    shared, shared_params, separate, params = shared_and_separate
    obs = observations()
    logits, value = separate.apply(params, obs)
    shared_logits, shared_value = shared.apply(shared_params, obs)
    np.testing.assert_array_equal(logits, shared_logits)
    assert value.shape == shared_value.shape == (6,)
    assert not np.array_equal(value, shared_value)


def test_each_loss_moves_only_its_own_layers(shared_and_separate):
    _, _, separate, params = shared_and_separate
    obs = observations()

    def grads_of(part):
        def loss(p):
            logits, value = separate.apply(p, obs)
            return jnp.sum(value**2) if part == "value" else jnp.sum(jax.nn.log_softmax(logits))

        return jax.grad(loss)(params)["params"]

    value_layers = value_only_layers(params)
    for part, own in (("value", value_layers), ("policy", set(params["params"]) - value_layers)):
        grads = grads_of(part)
        for name, layer in grads.items():
            moved = any(np.abs(np.asarray(g)).max() > 0 for g in jax.tree_util.tree_leaves(layer))
            assert moved == (name in own), (part, name)


def test_a_shared_network_has_its_trunk_copied_into_one_that_computes_the_same(
    shared_and_separate,
):
    shared, shared_params, separate, _ = shared_and_separate
    copied = with_value_trunk_copied(shared_params)
    obs = observations()
    for ours, theirs in zip(separate.apply(copied, obs), shared.apply(shared_params, obs)):
        np.testing.assert_array_equal(ours, theirs)  # bit for bit
    with pytest.raises(ValueError, match="only a grid network with a shared trunk"):
        with_value_trunk_copied(copied)
    with pytest.raises(ValueError, match="only a grid network with a shared trunk"):
        with_value_trunk_copied(init(make_network(32, 2)))


def test_one_network_takes_its_policy_from_one_and_its_value_from_another(
    shared_and_separate,
):
    """What ships a search's prior with another run's value (experiments §74): the merged
    network's logits are the prior's and its value the other's, bit for bit, whether the
    value's network shares its trunk or has its own."""
    shared, shared_params, separate, params = shared_and_separate
    obs = observations()
    other_shared = init(shared, seed=5)
    other_separate = init(separate, seed=6)
    for prior_net, prior in ((separate, params), (shared, shared_params)):
        for value_net, value in ((shared, other_shared), (separate, other_separate)):
            merged = with_value_from(prior, value)
            assert network_config_from_params(merged)["value_trunk"] == "separate"
            logits, merged_value = separate.apply(merged, obs)
            np.testing.assert_array_equal(logits, prior_net.apply(prior, obs)[0])
            np.testing.assert_array_equal(merged_value, value_net.apply(value, obs)[1])
    with pytest.raises(ValueError, match="sizes differ"):
        with_value_from(params, init(make_network(64, 2, network="grid")))
    with pytest.raises(ValueError, match="only two grid networks"):
        with_value_from(params, init(make_network(32, 2)))


def test_bare_parameters_tell_which_trunk_they_have(shared_and_separate):
    _, shared_params, _, params = shared_and_separate
    assert "value_trunk" not in network_config_from_params(shared_params)  # as before
    found = network_config_from_params(params)
    assert found["value_trunk"] == "separate" and found["hidden_dim"] == 32
    assert network_for_params(params).value_trunk == "separate"
    # A value trunk missing a layer, or of other sizes than the policy's, is neither network.
    partial = {"params": {k: v for k, v in params["params"].items() if k != "value_conv_1"}}
    with pytest.raises(ValueError, match="separate value trunk"):
        network_config_from_params(partial)
    wider = init(make_network(64, 2, network="grid", value_trunk="separate"))
    mixed = {"params": {**params["params"], "value_trunk_1": wider["params"]["value_trunk_1"]}}
    with pytest.raises(ValueError, match="separate value trunk"):
        network_config_from_params(mixed)


def test_the_start_up_line_names_the_separate_trunk(shared_and_separate):
    shared, _, separate, _ = shared_and_separate
    assert describe_network(separate).startswith("Network: grid with a separate value trunk")
    assert describe_network(shared).startswith("Network: grid, ")


def test_the_mlp_and_unknown_trunks_are_refused():
    with pytest.raises(ValueError, match="grid network only"):
        make_network(32, 2, network="mlp", value_trunk="separate")
    with pytest.raises(ValueError, match="unknown value trunk"):
        make_network(32, 2, network="grid", value_trunk="both")
    with pytest.raises(ValueError, match="--value-trunk separate is built for the grid network"):
        schedule_config(10, value_trunk="separate")  # the mlp by default
    with pytest.raises(ValueError, match="--value-trunk must be one of shared, separate, "):
        schedule_config(10, network="grid", value_trunk="both")
    assert schedule_config(10, network="grid", value_trunk="separate").value_trunk == "separate"


def test_the_value_only_warm_up_moves_the_value_trunk_and_head(shared_and_separate):
    _, _, separate, params = shared_and_separate
    config = cfg.TrainConfig(network="grid", hidden_dim=32, value_trunk="separate")
    state = TrainState.create(apply_fn=separate.apply, params=params, tx=make_optimizer(config))
    key = jax.random.PRNGKey(1)
    grads = jax.tree_util.tree_map(lambda p: jax.random.normal(key, p.shape), params)
    warm = apply_gradients_value_only(state, grads, jnp.float32(1))
    value_layers = value_only_layers(params)
    assert value_layers == {"critic"} | {VALUE_PREFIX + n for n in TRUNK}
    for name, layer in params["params"].items():
        assert leaves_equal(warm.params["params"][name], layer) == (name not in value_layers)


# ------------------------------------------------------- the critic reading the policy


@pytest.fixture(scope="module")
def reads_policy():
    network = make_network(32, 2, network="grid", value_trunk="separate-reads-policy")
    return network, init(network)


def test_reading_the_policy_widens_only_the_critic(shared_and_separate, reads_policy):
    _, _, separate, params = shared_and_separate
    network, reading = reads_policy
    assert set(reading["params"]) == set(params["params"])
    for name, layer in params["params"].items():
        if name != "critic":  # every other layer: the separate network's names and values
            assert leaves_equal(reading["params"][name], layer), name
    assert np.shape(reading["params"]["critic"]["kernel"]) == (64, 1)
    logits, _ = network.apply(reading, observations())
    np.testing.assert_array_equal(logits, separate.apply(params, observations())[0])


def test_the_value_reads_the_policys_features_but_never_moves_them(reads_policy):
    network, params = reads_policy
    obs = observations()

    def value_grads(p):
        return jax.grad(lambda q: jnp.sum(network.apply(q, obs)[1] ** 2))(p)["params"]

    value_layers = value_only_layers(params)
    assert value_layers == {"critic"} | {VALUE_PREFIX + n for n in TRUNK}
    for name, layer in value_grads(params).items():
        moved = any(np.abs(np.asarray(g)).max() > 0 for g in jax.tree_util.tree_leaves(layer))
        assert moved == (name in value_layers), name
    # ...and the value does depend on the policy's trunk: change it and the value changes.
    layers = dict(params["params"])
    layers["trunk_1"] = jax.tree_util.tree_map(lambda x: x * 1.5, layers["trunk_1"])
    _, moved_value = network.apply({"params": layers}, obs)
    assert not np.array_equal(moved_value, network.apply(params, obs)[1])


def test_a_network_becomes_one_that_reads_the_policy_computing_the_same(
    shared_and_separate, reads_policy
):
    shared, shared_params, separate, params = shared_and_separate
    network, _ = reads_policy
    obs = observations()
    for source_net, source in ((separate, params), (shared, shared_params)):
        widened = with_critic_reading_policy(source)
        assert network_config_from_params(widened)["value_trunk"] == "separate-reads-policy"
        for ours, theirs in zip(network.apply(widened, obs), source_net.apply(source, obs)):
            np.testing.assert_array_equal(ours, theirs)  # bit for bit
    with pytest.raises(ValueError, match="does not read the policy yet"):
        with_critic_reading_policy(with_critic_reading_policy(params))
    with pytest.raises(ValueError, match="does not read the policy yet"):
        with_critic_reading_policy(init(make_network(32, 2)))


def test_bare_parameters_tell_a_critic_that_reads_the_policy(reads_policy):
    network, params = reads_policy
    found = network_config_from_params(params)
    assert found["value_trunk"] == "separate-reads-policy" and found["hidden_dim"] == 32
    assert network_for_params(params).value_trunk == "separate-reads-policy"
    assert describe_network(network).startswith(
        "Network: grid with a separate value trunk that also reads the policy's, "
    )
    # A critic of any other height reads neither trunk.
    kernel = params["params"]["critic"]["kernel"]
    odd = {**params["params"], "critic": {**params["params"]["critic"], "kernel": kernel[:40]}}
    with pytest.raises(ValueError, match="twice its width"):
        network_config_from_params({"params": odd})


def test_a_value_that_reads_its_own_policy_does_not_move_to_another(
    shared_and_separate, reads_policy
):
    _, shared_params, _, params = shared_and_separate
    _, reading = reads_policy
    with pytest.raises(ValueError, match="reads its own network's policy trunk"):
        with_value_from(params, reading)
    # As the prior it gives its policy; the value's side is the other network's.
    merged = with_value_from(reading, params)
    assert network_config_from_params(merged)["value_trunk"] == "separate"


def test_init_from_widens_the_critic_and_never_narrows_it(
    shared_and_separate, reads_policy, tmp_path
):
    _, shared_params, _, params = shared_and_separate
    _, reading = reads_policy
    shape = {"network": "grid", "hidden_dim": 32, "num_layers": 2}
    for name, tree in (("shared", shared_params), ("separate", params), ("reads", reading)):
        save_params_npz(tmp_path / f"params_{name}.npz", jax.device_get(tree))
    ours = {**shape, "value_trunk": "separate-reads-policy"}
    for name, source in (("shared", shared_params), ("separate", params)):
        loaded, _, _ = load_initial_params(tmp_path / f"params_{name}.npz", ours, reading)
        assert leaves_equal(loaded, with_critic_reading_policy(source)), name
    for trunk in ("shared", "separate"):
        with pytest.raises(CheckpointError, match="give --value-trunk separate-reads-policy"):
            load_initial_params(
                tmp_path / "params_reads.npz", {**shape, "value_trunk": trunk}, params
            )


# ------------------------------------------------------------------ init-from and runs


def test_init_from_copies_a_shared_trunk_and_refuses_the_reverse(shared_and_separate, tmp_path):
    _, shared_params, _, params = shared_and_separate
    shape = {"network": "grid", "hidden_dim": 32, "num_layers": 2}
    for name, tree in (("shared", shared_params), ("separate", params)):
        save_params_npz(tmp_path / f"params_{name}.npz", jax.device_get(tree))
    loaded, _, _ = load_initial_params(
        tmp_path / "params_shared.npz", {**shape, "value_trunk": "separate"}, params
    )
    assert leaves_equal(loaded, with_value_trunk_copied(shared_params))
    with pytest.raises(CheckpointError, match="give --value-trunk separate"):
        load_initial_params(
            tmp_path / "params_separate.npz", {**shape, "value_trunk": "shared"}, params
        )


def test_a_run_from_shared_weights_trains_a_separate_trunk_that_resumes_and_loads(tmp_path, capsys):
    standin_run(tmp_path, "shared", 2, "--network", "grid")
    source = load_params(tmp_path / "shared" / "checkpoint_2.pkl")
    capsys.readouterr()
    standin_run(
        tmp_path,
        "separate",
        2,
        "--network",
        "grid",
        "--value-trunk",
        "separate",
        "--init-from",
        str(tmp_path / "shared" / "checkpoint_2.pkl"),
    )
    out = capsys.readouterr().out
    assert "Network: grid with a separate value trunk" in out
    assert "the value trunk starts as a copy of the shared trunk" in out
    trained = load_params(tmp_path / "separate" / "checkpoint_2.pkl")["params"]
    # Both trunks trained away from the weights they started at, and away from each other.
    for name in TRUNK:
        assert not leaves_equal(trained[name], source["params"][name]), name
        assert not leaves_equal(trained[VALUE_PREFIX + name], source["params"][name]), name
        assert not leaves_equal(trained[VALUE_PREFIX + name], trained[name]), name
    assert stored_config(tmp_path / "separate" / "final_params.npz")["value_trunk"] == "separate"
    # Its saves load wherever a policy loads, bare parameters included.
    policy = load_policy(tmp_path / "separate" / "final_params.npz")
    assert policy.network.value_trunk == "separate"
    # A resume keeps the checkpoint's trunk and refuses another.
    checkpoint = str(tmp_path / "separate" / "checkpoint_2.pkl")
    capsys.readouterr()
    flags = ["--env-module", "standin_env", "--checkpoint-dir", str(tmp_path), "--resume"]
    code = cli.main([*flags, checkpoint, "--value-trunk", "shared", "--total-timesteps", "512"])
    assert code == 2 and "trained with value_trunk=separate" in capsys.readouterr().err


def test_a_run_that_reads_the_policy_starts_from_a_separate_one_and_keeps_the_policy_still(
    tmp_path, capsys
):
    """The experiment §77's arm F ran: from a separate-trunk network, value layers only; the
    policy's layers stay bit for bit, the critic's new rows learn, and the saves load."""
    standin_run(tmp_path, "separate", 1, "--network", "grid", "--value-trunk", "separate")
    start = tmp_path / "separate" / "final_params.npz"
    source = load_params(start)["params"]
    capsys.readouterr()
    standin_run(
        tmp_path,
        "reads",
        2,
        "--network",
        "grid",
        "--value-trunk",
        "separate-reads-policy",
        "--value-warmup-updates",
        "100",
        "--init-from",
        str(start),
    )
    out = capsys.readouterr().out
    assert "that also reads the policy's" in out
    assert "the critic's reading of the policy trunk's features starts at zero" in out
    trained = load_params(tmp_path / "reads" / "checkpoint_2.pkl")["params"]
    for name in (*TRUNK, "actor"):
        assert leaves_equal(trained[name], source[name]), name
    reading_rows = np.asarray(trained["critic"]["kernel"])[32:]
    assert np.abs(reading_rows).max() > 0  # it learned to read the policy's features
    policy = load_policy(tmp_path / "reads" / "final_params.npz")
    assert policy.network.value_trunk == "separate-reads-policy"
