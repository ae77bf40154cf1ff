"""PyTorch references for what ported programs use: ``porting.safetensors``.

    ../torch-venv/bin/python tests/data/make_porting_fixtures.py   # any environment with torch

Each group of cases is described in the header's JSON (``groups``; ``cases`` marks the layer
fixtures' layout) and its tensors are stored under ``<group>/<case>/...``;
``tests/test_porting.py`` reads it without PyTorch:

* ``assign``: ``y = x.clone(); y[key] = v`` (PyTorch's ``index_put_``; ``torch.index_put`` for
  tuples of index tensors and for ``accumulate=True``), the output, and the gradients of
  ``sum(y * cotangent)`` with respect to ``x`` and ``v``. Keys are written in JSON: ``{"int":
  i}``, ``{"slice": [start, stop, step]}``, ``{"none": 0}``, ``{"ellipsis": 0}``, ``{"index":
  name}`` (an integer tensor stored as ``index.<name>``), ``{"mask": name}``.
* ``dim``: a function of ``torch`` called with PyTorch's keyword names (``dim=``,
  ``keepdim=``, ``dims=``, ``start_dim=``...) and its outputs.
* ``method``: a ``Tensor`` method with its arguments and its outputs (or, for a method that
  returns a Python value, the value in the JSON).
* ``random``: the shape and dtype of a random function's result.
* ``names``: ``torch.device`` spellings, dtype aliases and type names, as JSON only.

Made with PyTorch 2.13.0 (CPU), float64 unless a case says otherwise.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import torch
from safetensors.torch import save_file

HERE = pathlib.Path(__file__).parent
torch.manual_seed(0)
randn = torch.randn


def _key(spec: list[dict[str, Any]], stored: dict[str, torch.Tensor]) -> tuple[Any, ...]:
    parts: list[Any] = []
    for entry in spec:
        ((kind, value),) = entry.items()
        if kind == "int":
            parts.append(value)
        elif kind == "slice":
            parts.append(slice(*value))
        elif kind == "none":
            parts.append(None)
        elif kind == "ellipsis":
            parts.append(Ellipsis)
        else:  # index or mask
            parts.append(stored[f"index.{value}"])
    return tuple(parts)


ASSIGN = [
    # (name, x shape, key, value shape, extra tensors, mode)
    ("positional_encoding", (6, 8), [{"slice": [None, None, None]}, {"slice": [0, None, 2]}],
     (6, 4), {}, "setitem"),
    ("one_entry", (5,), [{"int": 3}], (), {}, "setitem"),
    ("negative_int_and_slice", (4, 5), [{"int": -1}, {"slice": [1, 4, None]}], (3,), {},
     "setitem"),
    ("row_broadcast", (3, 4), [{"int": 1}], (1, 4), {}, "setitem"),  # a leading 1 dropped
    ("ellipsis_last_axis", (2, 3, 4), [{"ellipsis": 0}, {"int": 0}], (3,), {}, "setitem"),
    ("new_axis", (3, 4), [{"none": 0}, {"int": 2}], (4,), {}, "setitem"),
    ("step_from_one", (7,), [{"slice": [1, None, 3]}], (2,), {}, "setitem"),
    ("index_tensors", (4, 5), [{"index": "rows"}, {"index": "cols"}], (3,),
     {"rows": torch.tensor([0, 2, 3]), "cols": torch.tensor([4, 0, 1])}, "index_put"),
    ("index_one_axis", (5, 3), [{"index": "rows"}], (2, 3),
     {"rows": torch.tensor([4, 1])}, "index_put"),
    ("slice_then_index", (3, 6), [{"slice": [None, None, None]}, {"index": "cols"}], (3, 2),
     {"cols": torch.tensor([5, 0])}, "setitem"),
    ("mask_scalar", (3, 4), [{"mask": "mask"}], (), {"mask": randn(3, 4) > 0}, "setitem"),
    ("mask_values", (3, 4), [{"mask": "mask"}], (5,),
     {"mask": torch.tensor([[1, 0, 0, 1], [0, 1, 0, 0], [1, 0, 1, 0]]).bool()}, "setitem"),
    ("accumulate_repeats", (4,), [{"index": "where"}], (5,),
     {"where": torch.tensor([0, 2, 0, 3, 0])}, "accumulate"),
]


def assign_cases(tensors: dict[str, torch.Tensor]) -> dict[str, Any]:
    described = {}
    for name, shape, key, value_shape, extra, mode in ASSIGN:
        stored = {f"index.{k}": v for k, v in extra.items()}
        x = randn(shape, dtype=torch.float64, requires_grad=True)
        v = randn(value_shape, dtype=torch.float64, requires_grad=True)
        index = _key(key, stored)
        if mode == "setitem":
            y = x.clone()
            y[index] = v
        else:
            y = torch.index_put(x, index, v, accumulate=mode == "accumulate")
        cotangent = randn(y.shape, dtype=torch.float64)
        grad_x, grad_v = torch.autograd.grad((y * cotangent).sum(), [x, v])
        stored.update({"x": x.detach(), "value": v.detach(), "output": y.detach(),
                       "cotangent": cotangent, "grad.x": grad_x, "grad.value": grad_v})
        for k, t in stored.items():
            tensors[f"assign/{name}/{k}"] = t.clone().contiguous()
        described[name] = {"key": key, "accumulate": mode == "accumulate"}
    return described


DIM = [
    # (name, function, input shape, kwargs, extra inputs)
    ("sum_keepdim", "sum", (3, 4), {"dim": 1, "keepdim": True}),
    ("sum_dims", "sum", (2, 3, 4), {"dim": (0, 2)}),
    ("mean", "mean", (3, 4), {"dim": 0}),
    ("amax", "amax", (3, 4), {"dim": -1, "keepdim": True}),
    ("argmax", "argmax", (3, 4), {"dim": 1, "keepdim": True}),
    ("argmin", "argmin", (3, 4), {"dim": 0}),
    ("prod", "prod", (3, 4), {"dim": 1}),
    ("logsumexp", "logsumexp", (3, 4), {"dim": 1, "keepdim": True}),
    ("softmax", "softmax", (3, 4), {"dim": -1}),
    ("log_softmax", "log_softmax", (3, 4), {"dim": 0}),
    ("cumsum", "cumsum", (3, 4), {"dim": 1}),
    ("cumprod", "cumprod", (3, 4), {"dim": 0}),
    ("squeeze", "squeeze", (3, 1, 4), {"dim": 1}),
    ("unsqueeze", "unsqueeze", (3, 4), {"dim": 2}),
    ("transpose", "transpose", (2, 3, 4), {"dim0": 0, "dim1": 2}),
    ("flatten", "flatten", (2, 3, 4, 5), {"start_dim": 1, "end_dim": 2}),
    ("flip", "flip", (3, 4), {"dims": (0, 1)}),
    ("roll", "roll", (3, 4), {"shifts": 1, "dims": 1}),
    ("permute", "permute", (2, 3, 4), {"dims": (2, 0, 1)}),
    ("split", "split", (5, 4), {"split_size_or_sections": 2, "dim": 0}),
    ("chunk", "chunk", (3, 6), {"chunks": 3, "dim": 1}),
    ("all", "all", (3, 4), {"dim": 1}),
    ("any", "any", (3, 4), {"dim": 0, "keepdim": True}),
    ("cat", "cat", None, {"dim": 1}),
    ("stack", "stack", None, {"dim": 1}),
]


def dim_cases(tensors: dict[str, torch.Tensor]) -> dict[str, Any]:
    described = {}
    for name, function, shape, kwargs in DIM:
        if shape is None:  # cat, stack: a list of two tensors
            inputs = [randn(2, 3, dtype=torch.float64), randn(2, 3, dtype=torch.float64)]
            out = getattr(torch, function)(inputs, **kwargs)
        else:
            x = randn(*shape, dtype=torch.float64)
            if function in ("all", "any"):
                x = x > 0
            inputs = [x]
            out = getattr(torch, function)(x, **kwargs)
        outputs = list(out) if isinstance(out, tuple) else [out]
        for i, t in enumerate(inputs):
            tensors[f"dim/{name}/input.{i}"] = t.clone().contiguous()
        for i, t in enumerate(outputs):
            tensors[f"dim/{name}/output.{i}"] = t.clone().contiguous()
        described[name] = {"function": function, "kwargs": kwargs, "list": shape is None}
    return described


METHODS = [
    # (name, method, input, positional args (tensors as {"tensor": key}), extra tensors)
    ("contiguous", "contiguous", (3, 4), [], {}),
    ("t", "t", (3, 4), [], {}),
    ("t_1d", "t", (4,), [], {}),
    ("narrow", "narrow", (4, 6), [1, 2, 3], {}),
    ("narrow_negative_start", "narrow", (5, 3), [0, -3, 2], {}),
    ("eq", "eq", (3, 4), [{"tensor": "other"}], {"other": (3, 4)}),
    ("ne", "ne", (3, 4), [0.5], {}),
    ("lt", "lt", (3, 4), [{"tensor": "other"}], {"other": (4,)}),
    ("le", "le", (3, 4), [0.0], {}),
    ("gt", "gt", (3, 4), [{"tensor": "other"}], {"other": (3, 1)}),
    ("ge", "ge", (3, 4), [-0.25], {}),
    ("pow", "pow", (3, 4), [2], {}),
    ("pow_tensor", "pow", (3, 4), [{"tensor": "other"}], {"other": (3, 4)}),
    ("view_as", "view_as", (3, 4), [{"tensor": "other"}], {"other": (2, 6)}),
    ("reshape_as", "reshape_as", (3, 4), [{"tensor": "other"}], {"other": (4, 3)}),
    ("expand_as", "expand_as", (3, 1), [{"tensor": "other"}], {"other": (3, 5)}),
    ("type_as", "type_as", (3, 4), [{"tensor": "other"}], {"other": (2,)}),
    ("float", "float", (3, 4), [], {}),
    ("double", "double", (3, 4), [], {}),
    ("long", "long", (3, 4), [], {}),
    ("int", "int", (3, 4), [], {}),
    ("bool", "bool", (3, 4), [], {}),
    ("half", "half", (3, 4), [], {}),
    ("type_dtype", "type", (3, 4), ["torch.FloatTensor"], {}),
    ("new_zeros", "new_zeros", (3, 4), [(2, 3)], {}),
    ("new_ones", "new_ones", (3, 4), [(2,)], {}),
    ("new_full", "new_full", (3, 4), [(2, 2), 3.5], {}),
    ("new_tensor", "new_tensor", (3, 4), [[1, 2, 3]], {}),
    ("add_alpha", "add", (3, 4), [{"tensor": "other"}], {"other": (3, 4)}),
    ("sub", "sub", (3, 4), [{"tensor": "other"}], {"other": (4,)}),
    ("mul", "mul", (3, 4), [0.5], {}),
    ("div", "div", (3, 4), [{"tensor": "other"}], {"other": (3, 4)}),
    ("neg", "neg", (3, 4), [], {}),
]
KEYWORDS = {"add_alpha": {"alpha": 2.0}}
VALUES = [  # methods that return Python values
    ("numel", (3, 4, 5), "numel", []),
    ("dim", (3, 4, 5), "dim", []),
    ("size_axis", (3, 4, 5), "size", [1]),
    ("size_negative", (3, 4, 5), "size", [-1]),
    ("nelement", (2, 3), "nelement", []),
    ("is_floating_point", (2,), "is_floating_point", []),
    ("is_contiguous", (2,), "is_contiguous", []),
    ("type_name_float", (2,), "type", []),
]
FORMATS = [(2.5, ".4f"), (-1.0 / 3.0, ".3e"), (12345.678, ","), (0.125, ""), (7.0, "8.2f")]


def method_cases(tensors: dict[str, torch.Tensor]) -> dict[str, Any]:
    described: dict[str, Any] = {}
    for name, method, shape, args, extra in METHODS:
        x = randn(*shape, dtype=torch.float64)
        stored = {"input": x}
        stored.update({f"arg.{k}": randn(*s, dtype=torch.float64) for k, s in extra.items()})
        if name == "type_as":
            stored["arg.other"] = torch.tensor([1, 2], dtype=torch.int32)
        if name == "pow_tensor":
            x = stored["input"] = x.abs() + 0.5
        call = [stored[f"arg.{a['tensor']}"] if isinstance(a, dict) else a for a in args]
        out = getattr(x, method)(*call, **KEYWORDS.get(name, {}))
        stored["output"] = out
        for k, t in stored.items():
            tensors[f"method/{name}/{k}"] = t.clone().contiguous()
        described[name] = {"method": method, "args": args, "kwargs": KEYWORDS.get(name, {}),
                           "dtype": str(out.dtype).removeprefix("torch.")}
    for name, shape, method, args in VALUES:
        value = getattr(randn(*shape, dtype=torch.float32), method)(*args)
        described[name] = {"method": method, "shape": shape, "args": args,
                           "value": value if not isinstance(value, torch.Size) else list(value)}
    described["format"] = [[value, spec, format(torch.tensor(value, dtype=torch.float64), spec)]
                           for value, spec in FORMATS]
    return described


RANDOM = [
    # (name, call) -- the call's result: its shape and dtype are recorded
    ("randint_high_size", lambda: torch.randint(10, (2, 3))),
    ("randint_low_high_size", lambda: torch.randint(3, 10, (4,))),
    ("randint_dtype", lambda: torch.randint(0, 5, (3,), dtype=torch.int32)),
    ("randint_like_float", lambda: torch.randint_like(torch.zeros(2, 3), 10)),
    ("randint_like_low_high", lambda: torch.randint_like(torch.zeros(4, dtype=torch.int32), 2, 9)),
    ("rand_like", lambda: torch.rand_like(torch.zeros(3, 2, dtype=torch.float64))),
    ("randn_like", lambda: torch.randn_like(torch.zeros(5))),
    ("bernoulli", lambda: torch.bernoulli(torch.full((3, 4), 0.5, dtype=torch.float64))),
    ("bernoulli_p", lambda: torch.bernoulli(torch.zeros(2, 5), 0.25)),
    ("multinomial_1d", lambda: torch.multinomial(torch.tensor([1.0, 2.0, 3.0]), 2)),
    ("multinomial_2d_replacement",
     lambda: torch.multinomial(torch.rand(4, 6), 10, replacement=True)),
    ("normal_tensor_float", lambda: torch.normal(torch.zeros(2, 3), 1.0)),
    ("normal_float_tensor", lambda: torch.normal(0.0, torch.ones(4, dtype=torch.float64))),
    ("normal_tensors", lambda: torch.normal(torch.zeros(3, 1), torch.ones(1, 4))),
    ("normal_floats_size", lambda: torch.normal(2.0, 3.0, (2, 5))),
    ("randperm", lambda: torch.randperm(6)),
    ("randperm_dtype", lambda: torch.randperm(6, dtype=torch.int32)),
    ("randn_generator", lambda: torch.randn(2, 3, generator=torch.Generator().manual_seed(1))),
]


def random_cases() -> dict[str, Any]:
    return {name: {"shape": list(call().shape), "dtype": str(call().dtype).removeprefix("torch.")}
            for name, call in RANDOM}


def names() -> dict[str, Any]:
    spellings = ["cpu", "cuda", "cuda:1", "cpu:0"]
    devices = {s: {"str": str(torch.device(s)), "repr": repr(torch.device(s)),
                   "type": torch.device(s).type, "index": torch.device(s).index}
               for s in spellings}
    devices["('cuda', 2)"] = {"str": str(torch.device("cuda", 2)),
                              "repr": repr(torch.device("cuda", 2)), "type": "cuda", "index": 2}
    equal = {f"{a} == {b}": torch.device(a) == torch.device(b)
             for a, b in [("cuda", "cuda:0"), ("cpu", "cpu:0"), ("cuda:1", "cuda:1"),
                          ("cpu", "cpu")]}
    aliases = {name: str(getattr(torch, name)).removeprefix("torch.")
               for name in ("long", "int", "short", "half", "float", "double", "bool")}
    types = {str(dtype).removeprefix("torch."): torch.zeros(1, dtype=dtype).type()
             for dtype in (torch.float32, torch.float64, torch.float16, torch.int64, torch.int32,
                           torch.int16, torch.int8, torch.uint8, torch.bool)}
    return {"devices": devices, "equal": equal, "aliases": aliases, "types": types}


def main() -> None:
    tensors: dict[str, torch.Tensor] = {}
    described = {"assign": assign_cases(tensors), "dim": dim_cases(tensors),
                 "method": method_cases(tensors), "random": random_cases(), "names": names()}
    save_file(tensors, HERE / "porting.safetensors",
              metadata={"groups": json.dumps(described), "torch": torch.__version__})


if __name__ == "__main__":
    main()
