"""Where a checkpoint's gradient goes (analysis/gradients.py, training.md §3.8).

The end-to-end check of `hackmatrix-gradients`, on a trained run's own checkpoint, is
tests/purejaxrl/test_runs.py's `test_gradient_parts_add_up_to_the_loss_gradient`: it
shares that file's trained run.
"""

import pytest

from hackmatrix.analysis.gradients import head_names, shared_layers


def test_the_heads_are_named_by_network_kind():
    mlp = {"params": {"Dense_0": 1, "Dense_1": 2, "Dense_2": 3, "Dense_3": 4}}
    assert head_names(mlp) == ("Dense_2", "Dense_3")
    assert shared_layers(mlp, head_names(mlp)) == {"Dense_0": 1, "Dense_1": 2}
    grid = {"params": {"cell_encoder": 1, "trunk_0": 2, "actor": 3, "critic": 4}}
    assert head_names(grid) == ("actor", "critic")
    with pytest.raises(ValueError, match="cannot tell the heads"):
        head_names({"params": {"Dense_0": 1}})
