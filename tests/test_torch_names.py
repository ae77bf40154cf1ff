"""PyTorch's ``dim=``/``keepdim=`` as aliases of ``axis=``/``keepdims=`` (``dparray/_aliases.py``).

The results against PyTorch are in ``test_porting.py``; here the mechanism: every public op and
Tensor method with an axis argument takes the alias, both together are an error, and a
function without axis arguments is left as it was.
"""

from __future__ import annotations

import inspect

import pytest

import dparray as dp
from dparray import ops
from dparray._aliases import aliases_of, torch_names

AXIS_NAMES = {"axis", "axes", "axis0", "axis1", "axis2", "start_axis", "end_axis", "keepdims"}


def _axis_parameters(function):
    return AXIS_NAMES & set(inspect.signature(function).parameters)


def test_every_op_with_an_axis_takes_pytorchs_names():
    covered = 0
    for name in ops.__all__:
        function = getattr(dp, name)
        if not inspect.isfunction(function) or not _axis_parameters(function):
            continue
        aliases = getattr(function, "torch_aliases", None)
        assert aliases is not None, f"dparray.{name} takes no dim="
        assert set(aliases.values()) >= _axis_parameters(function), name
        covered += 1
    assert covered > 30


def test_every_tensor_method_with_an_axis_takes_pytorchs_names():
    for name, member in vars(dp.tensor_methods.TensorMethods).items():
        if inspect.isfunction(member) and _axis_parameters(member):
            assert getattr(member, "torch_aliases", None), f"Tensor.{name} takes no dim="


def test_the_names_derive_from_the_array_apis():
    def f(x, axis=0, axis0=0, start_axis=0, end_axis=0, axes=(), keepdims=False, other=1):
        return x

    assert aliases_of(f) == {"dim": "axis", "dim0": "axis0", "start_dim": "start_axis",
                             "end_dim": "end_axis", "dims": "axes", "keepdim": "keepdims"}
    assert aliases_of(dp.roll.__wrapped__) == {"dim": "axis", "dims": "axis", "shifts": "shift"}

    def plain(x, y):
        return x

    assert torch_names(plain) is plain


def test_a_name_and_its_alias_together_are_a_type_error(backend):
    x = dp.ones(2, 3)
    with pytest.raises(TypeError, match=r"^sum\(\) got both axis= and its alias dim=; pass one"):
        dp.sum(x, axis=1, dim=1)
    with pytest.raises(TypeError, match=r"got both keepdims= and its alias keepdim="):
        x.sum(keepdims=True, keepdim=True)
    with pytest.raises(TypeError, match=r"^sum\(\) got both axis= and its alias dim="):
        dp.sum(x, 1, dim=1)  # positionally too
    with pytest.raises(TypeError, match=r"^Tensor\.permute\(\) got both axes= and its alias "):
        x.permute(1, 0, dims=(1, 0))
    with pytest.raises(TypeError, match=r"^unsqueeze\(\) missing 1 required argument: 'axis'"):
        dp.unsqueeze(x)
    assert x.permute(dims=(1, 0)).shape == (3, 2) and dp.flip(x, dims=0).shape == (2, 3)


def test_positional_and_array_api_calls_are_unchanged(backend):
    x = dp.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert dp.sum(x, 1).tolist() == x.sum(axis=1).tolist() == x.sum(dim=1).tolist()
    assert x.mean(dim=0, keepdim=True).shape == (1, 2)
    assert [t.shape for t in x.split(1, dim=1)] == [(2, 1), (2, 1)]
    assert dp.cat([x, x], dim=0).shape == (4, 2)
