"""The fused class losses against PyTorch (fixtures in tests/data/losses.safetensors)."""

from __future__ import annotations

import pytest
from torch_reference import check, load_cases

CASES = load_cases("losses")


# kl_div with reduction="mean" warns, as PyTorch's does (tests/test_losses.py asserts it)
@pytest.mark.filterwarnings("ignore:kl_div. reduction='mean':UserWarning")
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_loss_and_gradients_match_pytorch(case, backend, kernels):
    check(case)
