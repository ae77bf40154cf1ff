"""Fixture files whose PyTorch cases are grouped under metadata keys
(``torch_reference.load_grouped``): layer cases, checked by ``torch_reference.check``, and
function cases, checked here the same way -- every output (indices included), then the
gradients of ``sum(output_i * cotangent_i)`` with respect to the floating inputs (an input the
function does not differentiate, as ``cdist``'s ``p = 0``, has gradient zeros in PyTorch).

A function case names its function (in ``dparray.nn.functional``, or a dotted path from
``dparray``) and, when the generator passed its inputs by keyword, those keywords (``names``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
from torch_reference import ReferenceCase, indexed, load_grouped

import dparray as dp


@dataclass
class FunctionCase:
    name: str
    function: str
    names: list[str] | None  # the keyword of each input; None: positional
    kwargs: dict[str, Any]
    arrays: dict[str, np.ndarray]

    def __repr__(self) -> str:
        return self.name

    def indexed(self, prefix: str) -> list[np.ndarray]:
        return indexed(self.arrays, prefix)


@dataclass(frozen=True)
class GroupedFixture:
    """One fixture file: its layer cases under ``layers_key``, its function cases under
    ``functions_key``."""

    file: str
    layers_key: str
    functions_key: str

    def layer_cases(self, *layers: str) -> list[ReferenceCase]:
        """The layer cases whose layer is one of ``layers``, in the file's order."""
        described, arrays = load_grouped(self.file, self.layers_key)
        return [ReferenceCase(name, info["layer"], info["kwargs"], info["plain_kwargs"],
                              info["training"], arrays[name])
                for name, info in described.items() if info["layer"] in layers]

    def layer_reprs(self, *layers: str) -> list[tuple[str, dict[str, Any], str]]:
        """``(layer, kwargs, PyTorch's repr)`` of the layer cases of ``layers``."""
        described, _ = load_grouped(self.file, self.layers_key)
        return [(info["layer"], info["kwargs"], info["repr"]) for info in described.values()
                if info["layer"] in layers]

    def function_cases(self, *functions: str) -> list[FunctionCase]:
        """The function cases calling one of ``functions`` (all of them when none is given),
        in the file's order."""
        described, arrays = load_grouped(self.file, self.functions_key)
        return [FunctionCase(name, info["function"], info.get("names"), info["kwargs"],
                             arrays[name])
                for name, info in described.items()
                if not functions or info["function"] in functions]


MORE_LAYERS = GroupedFixture("more_layers.safetensors", "more_layers", "functions")
POOLING = GroupedFixture("pooling_layers.safetensors", "pooling_layers", "pooling_functions")


def _resolve(name: str) -> Any:
    if "." in name:
        return functools.reduce(getattr, name.split(".")[1:], dp)
    return getattr(dp.nn.functional, name)


def _flatten(value: Any) -> list[dp.Tensor]:
    if isinstance(value, dp.Tensor):
        return [value]
    return [t for item in value for t in _flatten(item)]


def check_function(case: FunctionCase, *, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    """The dparray function of ``case`` gives PyTorch's outputs and input gradients."""
    inputs = [dp.tensor(x, requires_grad=np.issubdtype(x.dtype, np.floating))
              for x in case.indexed("input")]
    function = _resolve(case.function)
    result = function(*inputs, **case.kwargs) if case.names is None else \
        function(**dict(zip(case.names, inputs, strict=True)), **case.kwargs)
    outputs = _flatten(result)
    expected = case.indexed("output")
    assert len(outputs) == len(expected), f"{case.name}: {len(outputs)} outputs, torch has " \
                                          f"{len(expected)}"
    for i, (out, want) in enumerate(zip(outputs, expected, strict=True)):
        assert out.shape == want.shape, f"{case.name}: output {i} shape {out.shape} != " \
                                        f"{want.shape}"
        assert out.dtype.name == str(want.dtype), f"{case.name}: output {i} is {out.dtype.name}"
        np.testing.assert_allclose(out.numpy(), want, rtol=rtol, atol=atol,
                                   err_msg=f"{case.name}: output {i}")
    total = None
    for key, cotangent in case.arrays.items():  # outputs without one (indices) are skipped
        if key.startswith("cotangent."):
            term = (outputs[int(key.partition(".")[2])] * dp.tensor(cotangent)).sum()
            total = term if total is None else total + term
    if total is None or not total.requires_grad:
        return
    grads = total.backward()
    for i, x in enumerate(inputs):
        want = case.arrays.get(f"grad.input.{i}")
        if want is None:
            continue
        got = grads[x].numpy() if x in grads else np.zeros_like(want)
        label = f"input {i}" if case.names is None else case.names[i]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg=f"{case.name}: gradient of {label}")
