"""The actor-critic networks (training.md §2.3): `mlp` (the default) and `grid`.

Both map a batch of flat observations f32[..., 1545] to (logits f32[..., 28],
value f32[...]). `network_config_from_params` tells which one a parameter
tree belongs to, with its sizes, from the parameter names and shapes alone,
so a bare `params_*.npz` can be loaded without its training config.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from ..names import (
    ACTION_COUNT,
    CELL_FEATURES,
    GRID_OFFSET,
    GRID_SIZE,
    OBS_SIZE,
    PLAYER_FEATURES,
    PROGRAM_FEATURES,
)
from .config import READS_POLICY, VALUE_TRUNKS

NUM_ACTIONS = ACTION_COUNT
NETWORKS = ("mlp", "grid")
# The separate value trunk's layers are the policy's names with this prefix.
VALUE_PREFIX = "value_"

# Flat observation layout (observation.md §2, §8): player ‖ programs ‖ grid.
PLAYER_SIZE = PLAYER_FEATURES
PROGRAMS_SIZE = PROGRAM_FEATURES
GRID_START = GRID_OFFSET
BOARD = GRID_SIZE
GRID_CHANNELS = CELL_FEATURES

# The grid network's default sizes (its other sizes are --hidden-dim / --num-layers).
CELL_DIM = 16  # per-cell features after the shared encoder and after each convolution
NUM_CONVS = 2  # 3x3 convolutions: two give every cell a 5x5 view of the 6x6 board
CELL_OUT_DIM = 8  # per-cell features flattened into the trunk (36 x 8 = 288)


class ActorCritic(nn.Module):
    """`num_layers` Dense+ReLU trunk, then a 28-way logit head and a value head.

    Submodules are created in order so the parameter names are
    Dense_0..Dense_{L-1} (trunk), Dense_L (actor), Dense_{L+1} (critic); the
    viewers infer the architecture from them. With `compute_dtype=bfloat16`
    the matmuls run in bf16 while parameters stay float32; outputs are float32.
    """

    hidden_dim: int = 256
    num_layers: int = 2
    num_actions: int = NUM_ACTIONS
    compute_dtype: jnp.dtype = jnp.float32

    @nn.compact
    def __call__(self, obs):
        x = obs.astype(self.compute_dtype)
        for _ in range(self.num_layers):
            x = nn.relu(nn.Dense(self.hidden_dim, dtype=self.compute_dtype)(x))
        logits = nn.Dense(self.num_actions, dtype=self.compute_dtype)(x)
        value = nn.Dense(1, dtype=self.compute_dtype)(x)
        return logits.astype(jnp.float32), jnp.squeeze(value, -1).astype(jnp.float32)


def player_plane(player: jax.Array) -> jax.Array:
    """f[..., 6, 6, 1]: 1.0 on the player's cell.

    The grid channels do not mark it (observation.md §5).
    """
    row = player[..., 0:1, None] * (BOARD - 1)  # sat(row / 5) * 5, within rounding of an integer
    col = player[..., 1:2, None] * (BOARD - 1)
    rows = jnp.arange(BOARD, dtype=player.dtype)[:, None]
    cols = jnp.arange(BOARD, dtype=player.dtype)[None, :]
    on = (jnp.abs(rows - row) < 0.5) & (jnp.abs(cols - col) < 0.5)
    return on.astype(player.dtype)[..., None]


class Conv3x3(nn.Module):
    """A 3x3 "SAME" convolution over the 6x6 board, computed as one matmul.

    The nine zero-padded shifts of the board are stacked on the feature axis
    and multiplied by the kernel seen as [9 * in, out]. Parameters (`kernel`
    [3, 3, in, out], `bias`) and initial values are `nn.Conv`'s; the result
    is the same convolution. Why not `nn.Conv`: inside the trainer's
    `lax.scan`, XLA:CPU ran it about 5x slower than this matmul (training.md §2.3).
    """

    features: int
    dtype: jnp.dtype = jnp.float32

    @nn.compact
    def __call__(self, h):
        kernel = self.param(
            "kernel", nn.initializers.lecun_normal(), (3, 3, h.shape[-1], self.features)
        )
        bias = self.param("bias", nn.initializers.zeros_init(), (self.features,))
        batch_pad = [(0, 0)] * (h.ndim - 3)
        padded = jnp.pad(h, batch_pad + [(1, 1), (1, 1), (0, 0)])
        shifts = [
            padded[..., dr : dr + BOARD, dc : dc + BOARD, :] for dr in range(3) for dc in range(3)
        ]
        stacked = jnp.concatenate(shifts, -1).astype(self.dtype)
        out = stacked @ kernel.reshape(9 * h.shape[-1], self.features).astype(self.dtype)
        return out + bias.astype(self.dtype)


class GridActorCritic(nn.Module):
    """A board-aware actor-critic.

    The 6x6x42 grid (plus a plane marking the player's cell) goes through a
    per-cell Dense shared by all 36 cells (`cell_encoder`), `num_convs` 3x3
    convolutions (`conv_i`, zero padding at the board edge), and a per-cell
    Dense down to `cell_out_dim` (`cell_out`). The cells are flattened in
    board order (so absolute position is kept), joined with the player and
    program vectors, and go through `num_layers` Dense+ReLU layers
    (`trunk_i`) to the `actor` and `critic` heads. Per env step this is about
    0.7 MFLOP forward with the defaults against the MLP's 0.94.

    With `value_trunk="separate"` the critic reads a second copy of every layer
    before the heads (`value_cell_encoder` ... `value_trunk_i`), so the value
    loss never moves the policy's features and the policy loss never moves the
    value's (twice the forward cost). With `"separate-reads-policy"` the critic
    reads, beside the value trunk's output, the policy trunk's output through a
    stop-gradient: the value uses the features the policy's gradients shaped
    and never moves them (specs/experiments/77). The shared layers keep their
    names and initial values either way.
    """

    hidden_dim: int = 256
    num_layers: int = 2
    cell_dim: int = CELL_DIM
    num_convs: int = NUM_CONVS
    cell_out_dim: int = CELL_OUT_DIM
    num_actions: int = NUM_ACTIONS
    compute_dtype: jnp.dtype = jnp.float32

    value_trunk: str = "shared"

    def _features(self, x, prefix: str = ""):
        """The trunk's output for flat observations `x`; `prefix` names a second copy."""
        dtype = self.compute_dtype
        batch = x.shape[:-1]
        player, programs = x[..., :PLAYER_SIZE], x[..., PLAYER_SIZE:GRID_START]
        grid = x[..., GRID_START:].reshape(batch + (BOARD, BOARD, GRID_CHANNELS))
        cells = jnp.concatenate([grid, player_plane(player)], -1)
        h = nn.relu(nn.Dense(self.cell_dim, dtype=dtype, name=f"{prefix}cell_encoder")(cells))
        for i in range(self.num_convs):
            h = nn.relu(Conv3x3(self.cell_dim, dtype=dtype, name=f"{prefix}conv_{i}")(h))
        h = nn.relu(nn.Dense(self.cell_out_dim, dtype=dtype, name=f"{prefix}cell_out")(h))
        z = jnp.concatenate(
            [h.reshape(batch + (BOARD * BOARD * self.cell_out_dim,)), player, programs], -1
        )
        for i in range(self.num_layers):
            z = nn.relu(nn.Dense(self.hidden_dim, dtype=dtype, name=f"{prefix}trunk_{i}")(z))
        return z

    @nn.compact
    def __call__(self, obs):
        if self.value_trunk not in VALUE_TRUNKS:
            raise ValueError(f"value_trunk must be one of {VALUE_TRUNKS}, got {self.value_trunk!r}")
        dtype = self.compute_dtype
        x = obs.astype(dtype)
        z = self._features(x)
        logits = nn.Dense(self.num_actions, dtype=dtype, name="actor")(z)
        z_value = z if self.value_trunk == "shared" else self._features(x, VALUE_PREFIX)
        if self.value_trunk == READS_POLICY:
            z_value = jnp.concatenate([z_value, jax.lax.stop_gradient(z)], -1)
        value = nn.Dense(1, dtype=dtype, name="critic")(z_value)
        return logits.astype(jnp.float32), jnp.squeeze(value, -1).astype(jnp.float32)


def make_network(
    hidden_dim: int,
    num_layers: int,
    bf16: bool = False,
    network: str = "mlp",
    value_trunk: str = "shared",
    **grid_sizes: Any,
) -> nn.Module:
    """The network named by `--network`.

    `grid_sizes` (cell_dim, num_convs, cell_out_dim) and a separate `value_trunk`
    (`--value-trunk`) apply to grid only.
    """
    dtype = jnp.bfloat16 if bf16 else jnp.float32
    if value_trunk not in VALUE_TRUNKS:
        raise ValueError(
            f"unknown value trunk {value_trunk!r}; choose one of {', '.join(VALUE_TRUNKS)}"
        )
    if network == "mlp":
        if grid_sizes:
            raise ValueError(f"the mlp network has no {', '.join(sorted(grid_sizes))}")
        if value_trunk != "shared":
            raise ValueError(f"value trunk {value_trunk!r} is built for the grid network only")
        return ActorCritic(hidden_dim=hidden_dim, num_layers=num_layers, compute_dtype=dtype)
    if network == "grid":
        return GridActorCritic(
            hidden_dim=hidden_dim,
            num_layers=num_layers,
            compute_dtype=dtype,
            value_trunk=value_trunk,
            **grid_sizes,
        )
    raise ValueError(f"unknown network {network!r}; choose one of {', '.join(NETWORKS)}")


# ------------------------------------------------------ rebuilding a stored network


def network_config_from_params(params: Mapping) -> dict[str, Any]:
    """Which network a `{"params": {...}}` tree belongs to, with its sizes.

    mlp: `Dense_0..Dense_{L+1}` (training.md §2.3). grid: `cell_encoder`,
    `conv_i`, `cell_out`, `trunk_i`, `actor`, `critic`. Raises ValueError
    for anything else.
    """
    layers = params.get("params", {}) if hasattr(params, "get") else {}
    names = sorted(map(str, layers))

    def kernel(name):
        return np.shape(layers[name]["kernel"])

    def numbered(prefix):
        found = sorted(int(m.group(1)) for n in names if (m := re.fullmatch(prefix + r"_(\d+)", n)))
        return len(found) if found == list(range(len(found))) else -1

    dense = numbered("Dense")
    if dense >= 3 and dense == len(names):
        return {"network": "mlp", "hidden_dim": int(kernel("Dense_0")[-1]), "num_layers": dense - 2}
    convs, trunk = numbered("conv"), numbered("trunk")
    expected = {"cell_encoder", "cell_out", "actor", "critic"}
    trunk_layers = {"cell_encoder", "cell_out"}
    trunk_layers |= {f"conv_{i}" for i in range(convs)} | {f"trunk_{i}" for i in range(trunk)}
    value_layers = {VALUE_PREFIX + name for name in trunk_layers}
    separate = bool(value_layers & set(names))
    size = len(trunk_layers) + 2 + (len(value_layers) if separate else 0)
    # A separate value trunk holds every layer of the policy's, each of the same shape.
    mirrored = not separate or (
        value_layers <= set(names)
        and all(np.shape(layers[VALUE_PREFIX + n]["kernel"]) == kernel(n) for n in trunk_layers)
    )
    # The critic reads the trunk's output, or the value trunk's beside the policy's.
    hidden = kernel("trunk_0")[-1] if "trunk_0" in names else -1
    critic_rows = kernel("critic")[0] if "critic" in names else -1
    reads_policy = separate and critic_rows == 2 * hidden
    if (
        expected <= set(names)
        and convs >= 0
        and trunk >= 1
        and len(names) == size
        and mirrored
        and (critic_rows == hidden or reads_policy)
    ):
        found = {
            "network": "grid",
            "hidden_dim": int(kernel("trunk_0")[-1]),
            "num_layers": trunk,
            "cell_dim": int(kernel("cell_encoder")[-1]),
            "num_convs": convs,
            "cell_out_dim": int(kernel("cell_out")[-1]),
        }
        # Only a separate trunk is named, so a shared network's description is as before.
        if not separate:
            return found
        return {**found, "value_trunk": READS_POLICY if reads_policy else "separate"}
    raise ValueError(
        f"parameter names {names} are neither the mlp's Dense_0..Dense_(L+1) nor the "
        f"grid network's cell_encoder/conv_i/cell_out/trunk_i/actor/critic (with, for a "
        f"separate value trunk, a {VALUE_PREFIX}copy of each layer before the heads, and a "
        f"critic that reads the last trunk layer, or twice its width for {READS_POLICY})"
    )


def value_only_layers(params: Mapping) -> frozenset[str]:
    """The layers only the value reads: the value head's, and a separate value trunk's.
    `--value-warmup-updates` trains these alone."""
    names = set(map(str, params["params"]))
    return frozenset({value_head_layer(params)} | {n for n in names if n.startswith(VALUE_PREFIX)})


def with_value_trunk_copied(params: Mapping) -> dict:
    """A shared-trunk grid network's `params` with a separate value trunk that starts as a
    copy of the shared one: the new network computes exactly the old one's logits and value,
    and from there each loss moves only its own trunk (`--value-trunk separate` with
    `--init-from` a shared checkpoint)."""
    found = network_config_from_params(params)
    if found["network"] != "grid" or found.get("value_trunk") == "separate":
        raise ValueError("only a grid network with a shared trunk can have its trunk copied")
    layers = dict(params["params"])
    for name in list(layers):
        if name not in ("actor", "critic"):
            layers[VALUE_PREFIX + name] = jax.tree_util.tree_map(jnp.array, layers[name])
    return {**params, "params": layers}


def with_critic_reading_policy(params: Mapping) -> dict:
    """A grid network's `params` (shared or separate trunk) as a `separate-reads-policy`
    network that computes exactly the same: a shared trunk is copied as the value trunk, and
    the critic's new rows, which read the policy trunk's output, start at zero
    (`--init-from` such a network into a `--value-trunk separate-reads-policy` run)."""
    found = network_config_from_params(params)
    if found["network"] != "grid" or found.get("value_trunk") == READS_POLICY:
        raise ValueError(
            f"only a grid network whose critic does not read the policy yet can become "
            f"{READS_POLICY}"
        )
    if found.get("value_trunk") != "separate":
        params = with_value_trunk_copied(params)
    layers = dict(params["params"])
    kernel = jnp.asarray(layers["critic"]["kernel"])
    wider = jnp.concatenate([kernel, jnp.zeros_like(kernel)], 0)
    layers["critic"] = {**layers["critic"], "kernel": wider}
    return {**params, "params": layers}


def with_value_from(prior: Mapping, value: Mapping) -> dict:
    """One grid network with a separate value trunk whose logits are exactly `prior`'s and
    whose value is exactly `value`'s: the policy layers come from `prior`, the value trunk
    and `critic` from `value` (its own value trunk, or its shared trunk when it has none).
    How a search's prior and a better value from another run ship as one file
    (`ship_policy.py --value-from`, specs/experiments/74). Sizes must agree."""
    found_prior, found_value = network_config_from_params(prior), network_config_from_params(value)
    if found_prior["network"] != "grid" or found_value["network"] != "grid":
        raise ValueError("only two grid networks can give one network its policy and value")
    sizes = [{k: v for k, v in f.items() if k != "value_trunk"} for f in (found_prior, found_value)]
    if sizes[0] != sizes[1]:
        raise ValueError(f"the two networks' sizes differ: policy {sizes[0]}, value {sizes[1]}")
    if found_value.get("value_trunk") == READS_POLICY:
        raise ValueError(
            f"the value's critic reads its own network's policy trunk ({READS_POLICY}); "
            "with another policy's trunk it would read other features"
        )
    if found_value.get("value_trunk") != "separate":
        value = with_value_trunk_copied(value)  # its shared trunk, as a value trunk
    prior_value_side = value_only_layers(prior)
    layers = {n: layer for n, layer in prior["params"].items() if n not in prior_value_side}
    layers |= {n: value["params"][n] for n in value_only_layers(value)}
    return {**prior, "params": jax.tree_util.tree_map(jnp.array, layers)}


def value_head_layer(params: Mapping) -> str:
    """The name of the layer that reads the value off the features: `critic` in the
    grid network, the last `Dense_i` in the mlp (training.md §2.3). `--value-warmup-updates`
    trains it alone."""
    kind = network_config_from_params(params)["network"]
    if kind == "grid":
        return "critic"
    layers = params["params"]
    return f"Dense_{len(layers) - 1}"


def with_value_head_zeroed(params: Mapping) -> dict:
    """`params` with the value head's layer at zero, so V is 0 on either value scale: a head
    that learned another `--value-target` scale reads nonsense on this one (a raw value of
    30 read as symlog is e^30), and its advantages would push the policy anywhere."""
    head = value_head_layer(params)
    layers = dict(params["params"])
    layers[head] = jax.tree_util.tree_map(jnp.zeros_like, layers[head])
    return {**params, "params": layers}


def network_from_config(config: Mapping) -> nn.Module:
    """The network a stored training config describes.

    No `network` entry means mlp, as before the entry existed.
    """
    kind = config.get("network") or "mlp"
    grid_sizes = {
        k: int(config[k]) for k in ("cell_dim", "num_convs", "cell_out_dim") if k in config
    }
    return make_network(
        int(config["hidden_dim"]),
        int(config["num_layers"]),
        bool(config.get("bf16", False)),
        kind,
        value_trunk=config.get("value_trunk") or "shared",
        **(grid_sizes if kind == "grid" else {}),
    )


def network_for_params(params: Mapping, config: Mapping | None = None) -> nn.Module:
    """The network that `params` belong to: sized from them, kind checked against `config`.

    The parameter shapes decide the sizes (they cannot be wrong); a stored
    config that names another kind of network is an error. bf16 comes from
    the config when given.
    """
    detected = network_config_from_params(params)
    config = dict(config or {})
    stored_kind = (config.get("network") or "mlp") if config else detected["network"]
    if stored_kind != detected["network"]:
        raise ValueError(
            f"the training config says network={stored_kind!r} but the parameters "
            f"are a {detected['network']!r} network"
        )
    return network_from_config({**detected, "bf16": bool(config.get("bf16", False))})


# ---------------------------------------------------------------- cost summary


def count_params(params: Any) -> int:
    return int(sum(np.prod(np.shape(x)) for x in jax.tree_util.tree_leaves(params)))


def forward_flops_per_obs(network: nn.Module, params: Any = None, batch: int = 64) -> float:
    """Forward FLOPs for one observation, from XLA's cost analysis of the compiled apply.

    It counts every floating-point operation XLA reports (matmuls and convs
    dominate; ReLUs and adds are included), for a batch of `batch` divided by it.
    """
    obs = jax.ShapeDtypeStruct((batch, OBS_SIZE), jnp.float32)
    if params is None:
        params = jax.eval_shape(network.init, jax.random.PRNGKey(0), obs)
    cost = jax.jit(network.apply).lower(params, obs).compile().cost_analysis()
    if isinstance(cost, (list, tuple)):  # older jax: one dict per computation
        cost = cost[0]
    if cost is None:
        raise RuntimeError("XLA gave no cost analysis for the network (the backend lacks one)")
    return float(cost["flops"]) / batch


def describe_network(network: nn.Module) -> str:
    """One start-up line: kind, parameters and forward FLOPs per env step (XLA cost analysis)."""
    obs = jax.ShapeDtypeStruct((1, OBS_SIZE), jnp.float32)
    shapes = jax.eval_shape(network.init, jax.random.PRNGKey(0), obs)
    kind = "grid" if isinstance(network, GridActorCritic) else "mlp"
    value_trunk = getattr(network, "value_trunk", "shared")
    if value_trunk != "shared":
        kind += " with a separate value trunk"
    if value_trunk == READS_POLICY:
        kind += " that also reads the policy's"
    return (
        f"Network: {kind}, {count_params(shapes):,} parameters, "
        f"{forward_flops_per_obs(network) / 1e6:.3f} MFLOP forward per env step (XLA cost analysis)"
    )
