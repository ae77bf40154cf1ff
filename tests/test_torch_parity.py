"""Every layer with a PyTorch fixture against PyTorch: each case of each family
(``tests/data/<family>.safetensors``, made by ``tests/data/make_<family>_fixtures.py``) gives
PyTorch's outputs, buffers and gradients in float64 on every backend, with the kernel table and
without, and its state dict has PyTorch's names, shapes and values (``torch_reference.py``).
What each layer does beyond PyTorch's numbers is tested in its family's own file."""

from __future__ import annotations

import contextlib

import pytest
from safetensors import safe_open
from torch_reference import DATA, ReferenceCase, check, check_state_dict_round_trip, load_cases

FAMILIES = ["activations", "attention", "conv", "core", "losses", "norm", "rnn", "small_layers",
            "transformer", "volumes", "reshaping_layers"]
CASES = [case for family in FAMILIES for case in load_cases(family)]

# PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32 even in float64
# (0.16666667163...), so its gradients are 3e-8 off the exact ones dparray computes
# (test_activations.py's finite-difference check confirms dparray's)
RTOL = {"Hardsigmoid": 1e-7}


def _lstm_call(module, x, *states):
    """LSTM takes its two initial states as one tuple."""
    return module(x, tuple(states) if states else None)


CALLS = {"LSTM": _lstm_call}


def _expected_warning(case: ReferenceCase) -> contextlib.AbstractContextManager:
    """kl_div with reduction="mean" warns when called, as PyTorch's does."""
    if case.layer == "KLDivLoss" and case.kwargs.get("reduction", "mean") == "mean":
        return pytest.warns(UserWarning, match="reduction='batchmean'")
    return contextlib.nullcontext()


def test_every_layer_fixture_is_checked_and_every_case_once():
    layer_fixtures = set()
    for path in DATA.glob("*.safetensors"):
        with safe_open(str(path), framework="numpy") as file:
            if "cases" in (file.metadata() or {}):  # torch_fixture_writer's layout
                layer_fixtures.add(path.stem)
    assert layer_fixtures == set(FAMILIES)
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_outputs_and_gradients_match_pytorch(case, backend, kernels):
    with _expected_warning(case):
        check(case, rtol=RTOL.get(case.layer, 1e-10), call=CALLS.get(case.layer))


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_state_dict_round_trip(case, backend, tmp_path):
    check_state_dict_round_trip(case, tmp_path)
