"""The volume layers (Conv3d, ConvTranspose3d, MaxPool3d, AvgPool3d), MaxUnpool2d and Upsample
on sequences, images and volumes against PyTorch (fixtures in tests/data/volumes), with and
without the backends' kernels; and their state dicts in PyTorch's layout."""

from __future__ import annotations

import pytest
from torch_reference import check, check_state_dict_round_trip, load_cases

CASES = load_cases("volumes")


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_outputs_and_gradients_match_pytorch(case, backend, kernels):
    check(case)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_state_dict_round_trip(case, tmp_path):
    check_state_dict_round_trip(case, tmp_path)
