"""Pure-JAX HackMatrix engine: jit- and vmap-able, bit-identical to the Swift reference."""

from .constants import REWARD_COMPONENT_NAMES
from .curriculum import curriculum_params, with_curriculum_prob
from .env import HackMatrixEnv, reset, reset_from_seed, reset_where, step
from .mask import action_mask, get_action_mask
from .observation import flatten_observation, observe
from .serialization import state_from_json, state_to_json
from .state import EnvParams, EnvState

__all__ = [
    "EnvParams",
    "EnvState",
    "HackMatrixEnv",
    "REWARD_COMPONENT_NAMES",
    "action_mask",
    "flatten_observation",
    "get_action_mask",
    "observe",
    "reset",
    "reset_from_seed",
    "reset_where",
    "state_from_json",
    "state_to_json",
    "step",
    "curriculum_params",
    "with_curriculum_prob",
]
