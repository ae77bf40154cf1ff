"""The layers that predate the fused ops, against PyTorch (fixtures in tests/data/core)."""

from __future__ import annotations

import pytest
from torch_reference import check, check_state_dict_round_trip, load_cases

CASES = load_cases("core")


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_outputs_and_gradients_match_pytorch(case, backend, kernels):
    check(case)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_state_dict_round_trip(case, tmp_path):
    check_state_dict_round_trip(case, tmp_path)
