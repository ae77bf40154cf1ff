"""Check dparray layers against PyTorch fixtures (``tests/data/<family>.safetensors``).

The fixtures are made by ``tests/data/make_<family>_fixtures.py`` through
``tests/data/torch_fixture_writer.py`` (see there for the layout); reading them needs only
NumPy and safetensors. ``check(case)`` builds the same layer in float64, loads PyTorch's state
dict into it, and compares outputs and every gradient; ``check_state_dict_round_trip(case)``
shows that the layer's own state dict has PyTorch's names, shapes and values.
"""

from __future__ import annotations

import inspect
import json
import pathlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from safetensors import safe_open

import dparray as dp

DATA = pathlib.Path(__file__).parent / "data"


def indexed(arrays: dict[str, np.ndarray], prefix: str) -> list[np.ndarray]:
    """``arrays[prefix.0]``, ``arrays[prefix.1]``, ... as a list."""
    count = sum(1 for key in arrays if key.startswith(prefix + "."))
    return [arrays[f"{prefix}.{i}"] for i in range(count)]


@dataclass
class ReferenceCase:
    name: str
    layer: str
    kwargs: dict[str, Any]
    plain_kwargs: dict[str, Any]
    training: bool
    arrays: dict[str, np.ndarray]

    def __repr__(self) -> str:
        return self.name

    def indexed(self, prefix: str) -> list[np.ndarray]:
        return indexed(self.arrays, prefix)

    def named(self, prefix: str) -> dict[str, np.ndarray]:
        start = len(prefix) + 1
        return {key[start:]: value for key, value in self.arrays.items()
                if key.startswith(prefix + ".")}


def load_grouped(file_name: str, metadata_key: str) -> tuple[dict[str, Any],
                                                             dict[str, dict[str, np.ndarray]]]:
    """The cases a fixture file (``tests/data/<file_name>``) describes under ``metadata_key``
    (JSON: name -> description), and each case's arrays (stored as ``<case>/<key>``) by key;
    arrays of cases under other metadata keys are left out."""
    with safe_open(str(DATA / file_name), framework="numpy") as file:
        cases = json.loads(file.metadata()[metadata_key])
        arrays: dict[str, dict[str, np.ndarray]] = {name: {} for name in cases}
        for key in file.keys():  # noqa: SIM118 - safe_open is not a mapping
            name, _, rest = key.partition("/")
            if name in arrays:
                arrays[name][rest] = file.get_tensor(key)
    return cases, arrays


def load_cases(family: str) -> list[ReferenceCase]:
    """Every case of ``tests/data/<family>.safetensors``, in the file's order."""
    path = DATA / f"{family}.safetensors"
    with safe_open(str(path), framework="numpy") as file:
        described = json.loads(file.metadata()["cases"])
        grouped: dict[str, dict[str, np.ndarray]] = {name: {} for name in described}
        for key in file.keys():  # noqa: SIM118 - safe_open is not a mapping
            name, _, rest = key.partition("/")
            grouped[name][rest] = file.get_tensor(key)
    return [ReferenceCase(name, info["layer"], info["kwargs"], info["plain_kwargs"],
                          info["training"], grouped[name]) for name, info in described.items()]


def construct(case: ReferenceCase) -> dp.nn.Module:
    """A new dparray layer of ``case``'s kind and arguments, float64 if it has parameters."""
    return _layer(case, case.layer, case.kwargs)


def _layer(case: ReferenceCase, name: str, arguments: dict[str, Any]) -> dp.nn.Module:
    layer = getattr(dp.nn, name)
    kwargs = {key: _argument(case, value) for key, value in arguments.items()}
    takes_dtype = "dtype" in inspect.signature(layer).parameters
    return layer(**kwargs, dtype="float64") if takes_dtype else layer(**kwargs)


def _argument(case: ReferenceCase, value: Any) -> Any:
    """A constructor argument: a tensor (``{"tensor": key}``), a layer built as the case's own
    (``{"layer": name, "kwargs": {...}}``: a Transformer's encoder layer), or the value."""
    if isinstance(value, dict) and "tensor" in value:
        return dp.tensor(case.arrays[value["tensor"]])
    if isinstance(value, dict) and "layer" in value:
        return _layer(case, value["layer"], value["kwargs"])
    return value


def build(case: ReferenceCase) -> dp.nn.Module:
    """The dparray layer of ``case``, in float64, holding PyTorch's weights."""
    module = construct(case)
    module.load_state_dict({k: dp.tensor(v) for k, v in case.named("state").items()})
    module.train(case.training)
    return module


def _flatten(value: Any) -> list[dp.Tensor]:
    if value is None:
        return []
    if isinstance(value, dp.Tensor):
        return [value]
    return [t for item in value for t in _flatten(item)]


def check(case: ReferenceCase, *, rtol: float = 1e-10, atol: float = 1e-12,
          call: Callable[..., Any] | None = None) -> None:
    """Outputs and gradients of the dparray layer equal PyTorch's (float64).

    ``call(module, *inputs, **kwargs)`` runs the module (its ``__call__`` by default).
    """
    module = build(case)
    inputs = [dp.tensor(x, requires_grad=np.issubdtype(x.dtype, np.floating))
              for x in case.indexed("input")]
    tensor_kwargs = {k: dp.tensor(v) for k, v in case.named("kwarg").items()}
    run = call or (lambda m, *args, **kwargs: m(*args, **kwargs))
    with dp.fork_rng(0):
        outputs = _flatten(run(module, *inputs, **tensor_kwargs, **case.plain_kwargs))
    expected = case.indexed("output")
    assert len(outputs) == len(expected), f"{case.name}: {len(outputs)} outputs, torch has " \
                                          f"{len(expected)}"
    for i, (out, want) in enumerate(zip(outputs, expected, strict=True)):
        assert out.shape == want.shape, f"{case.name}: output {i} shape {out.shape} != {want.shape}"
        np.testing.assert_allclose(out.numpy(), want, rtol=rtol, atol=atol,
                                   err_msg=f"{case.name}: output {i}")
    buffers = dict(module.named_buffers())
    for key, want in case.named("after").items():
        assert key in buffers, f"{case.name}: torch has a buffer {key!r}, dparray does not"
        np.testing.assert_allclose(buffers[key].numpy(), want, rtol=rtol, atol=atol,
                                   err_msg=f"{case.name}: buffer {key} after the call")
    cotangents = case.named("cotangent")
    if not cotangents:
        return
    total = None
    for key, cotangent in cotangents.items():
        term = (outputs[int(key)] * dp.tensor(cotangent)).sum()
        total = term if total is None else total + term
    grads = total.backward()
    for i, x in enumerate(inputs):
        want = case.arrays.get(f"grad.input.{i}")
        if want is not None:
            np.testing.assert_allclose(grads[x].numpy(), want, rtol=rtol, atol=atol,
                                       err_msg=f"{case.name}: gradient of input {i}")
    params = dict(module.named_parameters())
    for key, want in case.named("grad.state").items():
        assert key in params, f"{case.name}: torch has a parameter {key!r}, dparray does not"
        got = grads[params[key]].numpy() if params[key] in grads else np.zeros_like(want)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg=f"{case.name}: gradient of {key}")


def check_state_dict_round_trip(case: ReferenceCase, tmp_path: pathlib.Path) -> None:
    """Saved through ``dparray.save``, the layer's state dict has exactly PyTorch's keys,
    shapes and values, so a ``torch.nn`` module loads it; and it loads back into dparray."""
    from safetensors.numpy import load_file

    module = build(case)
    expected = case.named("state")
    if not expected:
        assert module.state_dict() == {}
        return
    path = tmp_path / f"{case.name}.safetensors"
    dp.save(module.state_dict(), path)
    saved = load_file(str(path))
    assert sorted(saved) == sorted(expected)
    for key, value in expected.items():
        assert saved[key].shape == value.shape, key
        np.testing.assert_array_equal(saved[key], value, err_msg=key)
    fresh = construct(case)
    fresh.load_state_dict(dp.load(path))
    for (key, a), (_, b) in zip(fresh.state_dict().items(), module.state_dict().items(),
                                strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=key)


def op_tolerance(want: np.ndarray, rtol: float = 1e-12) -> dict[str, float]:
    """float64 to rounding; float32 (a product's terms summed in another order) to 1e-6."""
    if want.dtype == np.float32:
        return {"rtol": 1e-6, "atol": 1e-6}
    return {"rtol": rtol, "atol": 1e-12}


def check_op_case(op: Callable[..., Any], arrays: dict[str, np.ndarray],
                  differentiable: bool) -> None:
    """``op`` of an op fixture's inputs (``input.i``) gives its outputs (``output.i``: values,
    shapes and dtypes) and, when ``differentiable``, the gradients of ``sum(output_i *
    cotangent_i)`` by the floating inputs (``grad.i``; zeros where nothing flows)."""
    inputs = [dp.tensor(a, requires_grad=differentiable and np.issubdtype(a.dtype, np.floating))
              for a in indexed(arrays, "input")]
    result = op(*inputs)
    outputs = list(result) if isinstance(result, tuple) else [result]
    expected = indexed(arrays, "output")
    assert len(outputs) == len(expected)
    for out, want in zip(outputs, expected, strict=True):
        assert out.shape == want.shape
        assert out.dtype.name == want.dtype.name
        np.testing.assert_allclose(out.numpy(), want, **op_tolerance(want))
    if not differentiable:
        return
    total = None
    for i, out in enumerate(outputs):
        cotangent = arrays.get(f"cotangent.{i}")
        if cotangent is not None:
            term = (out * dp.tensor(cotangent)).sum()
            total = term if total is None else total + term
    grads = total.backward() if total is not None and total.requires_grad else {}
    for i, x in enumerate(inputs):
        want = arrays.get(f"grad.{i}")
        if want is not None:
            got = grads[x].numpy() if x in grads else np.zeros_like(want)
            np.testing.assert_allclose(got, want, **op_tolerance(want, rtol=1e-10),
                                       err_msg=f"gradient of input {i}")
