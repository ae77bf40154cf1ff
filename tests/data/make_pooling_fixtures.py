"""PyTorch references for the 1-D and 3-D adaptive pools, the power-average pools, the 3-D batch
and instance norms, the bilinear layer and the embedding bags: ``pooling_layers.safetensors``.

    .venv/bin/python tests/data/make_pooling_fixtures.py   # any environment with torch

Made with PyTorch 2.13.0 (CPU), float64. Two kinds of case, both in the layout of
``torch_fixture_writer.py`` (inputs, state dict, outputs -- indices included --, cotangents,
and the gradients of the floating inputs and of every parameter), read by
``tests/grouped_fixtures.py``:

* layer cases (metadata ``pooling_layers``, described as ``torch_fixture_writer`` describes its
  ``cases``, plus ``repr``: PyTorch's repr of the module): a ``torch.nn`` module and the
  ``dparray.nn`` one of the same name and arguments, checked by ``torch_reference.check``;
* function cases (metadata ``pooling_functions``, JSON: for each case ``function`` -- its name in
  ``torch.nn.functional`` and ``dparray.nn.functional`` --, ``names``: the keyword each input
  tensor is passed by, and the other keyword arguments ``kwargs``).

Neither key is ``cases``, so ``test_torch_parity.py`` leaves the file to their own tests.

Sizes differ on purpose (an axis mixed up shows), adaptive windows overlap (sizes that do not
divide) and grow (outputs larger than inputs), LP pools meet a window of zeros (gradient 0 by
PyTorch's rule) and ``ceil_mode``'s partial windows, and the embedding bags hold empty bags,
bags of padding only, repeated indices and, in ``f_bag_max_ties``, equal values in different
rows (the first maximum takes the gradient).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import torch
from safetensors.torch import save_file
from torch_fixture_writer import HERE, TorchCase, record, recorded, with_statistics

nn = torch.nn
F = torch.nn.functional
INF = float("inf")


def randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float64)


def positive(*shape: int) -> torch.Tensor:
    """Values in ``[0.2, 1.5)``: powers of them are real for any ``p``."""
    return torch.rand(*shape, dtype=torch.float64) * 1.3 + 0.2


def ints(high: int, *shape: int) -> torch.Tensor:
    return torch.randint(0, high, shape)


@dataclass
class FunctionCase:
    name: str
    function: str  # in torch.nn.functional and dparray.nn.functional
    inputs: dict[str, torch.Tensor]  # passed by keyword
    kwargs: dict[str, Any] = field(default_factory=dict)


class _Call(nn.Module):
    """A function of ``torch.nn.functional`` as a module without parameters, for ``record``:
    its tensors come positionally and are passed by the keywords ``names``."""

    def __init__(self, function: str, names: list[str], kwargs: dict[str, Any]) -> None:
        super().__init__()
        self.function, self.names, self.kwargs = getattr(F, function), names, kwargs

    def forward(self, *inputs: torch.Tensor) -> Any:
        return self.function(**dict(zip(self.names, inputs, strict=True)), **self.kwargs)


def _layer(name: str, layer: str, kwargs: dict[str, Any], *inputs: torch.Tensor,
           module: nn.Module | None = None, training: bool = False) -> TorchCase:
    built = getattr(nn, layer)(**kwargs) if module is None else module
    return TorchCase(name, layer, kwargs, built, list(inputs), training=training)


def adaptive_cases() -> tuple[list[TorchCase], list[FunctionCase]]:
    torch.manual_seed(0)
    layers = [
        _layer("avg1d", "AdaptiveAvgPool1d", {"output_size": 3}, randn(2, 3, 7)),
        _layer("avg1d_grow", "AdaptiveAvgPool1d", {"output_size": 7}, randn(2, 3, 4)),
        _layer("avg1d_unbatched", "AdaptiveAvgPool1d", {"output_size": [4]}, randn(3, 10)),
        _layer("max1d", "AdaptiveMaxPool1d", {"output_size": 3, "return_indices": True},
               randn(2, 3, 7)),
        _layer("max1d_grow_unbatched", "AdaptiveMaxPool1d",
               {"output_size": 5, "return_indices": True}, randn(3, 4)),
        _layer("avg3d", "AdaptiveAvgPool3d", {"output_size": [3, 4, 4]}, randn(2, 3, 5, 7, 6)),
        _layer("avg3d_none", "AdaptiveAvgPool3d", {"output_size": [None, 2, 3]},
               randn(2, 2, 4, 5, 6)),
        _layer("avg3d_grow_unbatched", "AdaptiveAvgPool3d", {"output_size": [3, 4, 5]},
               randn(2, 2, 3, 2)),
        _layer("max3d", "AdaptiveMaxPool3d", {"output_size": [3, 4, 4], "return_indices": True},
               randn(2, 3, 5, 7, 6)),
        _layer("max3d_none", "AdaptiveMaxPool3d",
               {"output_size": [1, None, 2], "return_indices": True}, randn(2, 2, 4, 5, 6)),
        _layer("max3d_unbatched", "AdaptiveMaxPool3d", {"output_size": 2}, randn(3, 5, 6, 7)),
        _layer("max3d_grow", "AdaptiveMaxPool3d",
               {"output_size": [3, 4, 5], "return_indices": True}, randn(1, 2, 2, 3, 2)),
    ]
    functions = [
        FunctionCase("f_avg1d", "adaptive_avg_pool1d", {"input": randn(2, 3, 9)},
                     {"output_size": 4}),
        FunctionCase("f_max1d", "adaptive_max_pool1d", {"input": randn(3, 9)},
                     {"output_size": 4, "return_indices": True}),
        FunctionCase("f_avg3d", "adaptive_avg_pool3d", {"input": randn(2, 2, 5, 4, 3)},
                     {"output_size": [2, None, 2]}),
        FunctionCase("f_max3d", "adaptive_max_pool3d", {"input": randn(2, 2, 5, 4, 3)},
                     {"output_size": [3, 3, 2], "return_indices": True}),
        FunctionCase("f_max3d_values", "adaptive_max_pool3d", {"input": randn(2, 4, 3, 3)},
                     {"output_size": 2}),
        FunctionCase("f_adaptive1d_with_indices", "adaptive_max_pool1d_with_indices",
                     {"input": randn(2, 3, 8)}, {"output_size": 3}),
        FunctionCase("f_adaptive2d_with_indices", "adaptive_max_pool2d_with_indices",
                     {"input": randn(2, 3, 7, 5)}, {"output_size": [3, 2]}),
        FunctionCase("f_adaptive3d_with_indices", "adaptive_max_pool3d_with_indices",
                     {"input": randn(1, 2, 4, 5, 3)}, {"output_size": [2, 3, 2]}),
        FunctionCase("f_max_pool1d_with_indices", "max_pool1d_with_indices",
                     {"input": randn(2, 3, 9)}, {"kernel_size": 3, "stride": 2, "padding": 1}),
        FunctionCase("f_max_pool2d_with_indices", "max_pool2d_with_indices",
                     {"input": randn(2, 3, 7, 6)}, {"kernel_size": 2, "ceil_mode": True}),
        FunctionCase("f_max_pool3d_with_indices", "max_pool3d_with_indices",
                     {"input": randn(1, 2, 5, 4, 6)},
                     {"kernel_size": [2, 3, 2], "stride": [2, 1, 2], "dilation": [1, 1, 2]}),
    ]
    return layers, functions


def lp_cases() -> tuple[list[TorchCase], list[FunctionCase]]:
    torch.manual_seed(1)
    layers = [
        _layer("lp1d", "LPPool1d", {"norm_type": 2, "kernel_size": 3}, randn(2, 3, 8)),
        _layer("lp1d_ceil", "LPPool1d",
               {"norm_type": 1.5, "kernel_size": 3, "stride": 2, "ceil_mode": True},
               positive(2, 3, 8)),
        _layer("lp1d_unbatched", "LPPool1d", {"norm_type": 2, "kernel_size": 2}, randn(3, 7)),
        _layer("lp2d", "LPPool2d", {"norm_type": 2, "kernel_size": [2, 3]}, randn(2, 3, 6, 7)),
        _layer("lp2d_ceil", "LPPool2d",
               {"norm_type": 1.5, "kernel_size": 2, "stride": 1, "ceil_mode": True},
               positive(2, 2, 5, 4)),
        _layer("lp2d_inf", "LPPool2d", {"norm_type": INF, "kernel_size": 2}, randn(2, 3, 4, 6)),
        _layer("lp3d", "LPPool3d", {"norm_type": 2, "kernel_size": 2}, randn(2, 2, 4, 5, 6)),
        _layer("lp3d_ceil", "LPPool3d",
               {"norm_type": 3.0, "kernel_size": [2, 1, 2], "stride": [1, 2, 1],
                "ceil_mode": True}, positive(2, 2, 3, 5, 4)),
        _layer("lp3d_unbatched", "LPPool3d", {"norm_type": 2, "kernel_size": [1, 2, 2]},
               randn(3, 2, 4, 4)),
    ]
    zeros = randn(2, 2, 8)
    zeros[:, :, 2:4] = 0.0  # a window of zeros: PyTorch's gradient there is 0
    signed = randn(2, 3, 9)
    functions = [
        FunctionCase("f_lp1d_zero_window", "lp_pool1d", {"input": zeros},
                     {"norm_type": 2, "kernel_size": 2}),
        FunctionCase("f_lp1d_sum", "lp_pool1d", {"input": signed},
                     {"norm_type": 1, "kernel_size": 3}),
        FunctionCase("f_lp2d", "lp_pool2d", {"input": positive(2, 3, 5, 6)},
                     {"norm_type": 2.5, "kernel_size": [2, 3], "stride": [1, 2]}),
        FunctionCase("f_lp3d_minus_inf", "lp_pool3d", {"input": randn(2, 2, 4, 4, 4)},
                     {"norm_type": -INF, "kernel_size": 2}),
        FunctionCase("f_lp3d", "lp_pool3d", {"input": positive(1, 2, 5, 4, 6)},
                     {"norm_type": 2, "kernel_size": [3, 2, 2], "ceil_mode": True}),
    ]
    return layers, functions


def norm_cases() -> list[TorchCase]:
    torch.manual_seed(2)
    x = randn(4, 3, 3, 4, 5) * 2.0 + 0.5
    return [
        _layer("batch3d_train", "BatchNorm3d", {"num_features": 3}, x,
               module=with_statistics(nn.BatchNorm3d(3)), training=True),
        _layer("batch3d_eval", "BatchNorm3d", {"num_features": 3}, x,
               module=with_statistics(nn.BatchNorm3d(3))),
        _layer("batch3d_cumulative", "BatchNorm3d", {"num_features": 3, "momentum": None}, x,
               module=with_statistics(nn.BatchNorm3d(3, momentum=None)), training=True),
        _layer("batch3d_plain", "BatchNorm3d",
               {"num_features": 3, "affine": False, "track_running_stats": False}, x,
               training=True),
        _layer("instance3d", "InstanceNorm3d", {"num_features": 3}, x),
        _layer("instance3d_affine_train", "InstanceNorm3d",
               {"num_features": 3, "affine": True, "track_running_stats": True}, x,
               module=with_statistics(nn.InstanceNorm3d(3, affine=True,
                                                        track_running_stats=True)),
               training=True),
        _layer("instance3d_affine_eval", "InstanceNorm3d",
               {"num_features": 3, "affine": True, "track_running_stats": True}, x,
               module=with_statistics(nn.InstanceNorm3d(3, affine=True,
                                                        track_running_stats=True))),
        _layer("instance3d_unbatched", "InstanceNorm3d", {"num_features": 3, "affine": True},
               randn(3, 2, 4, 3)),
    ]


def bilinear_cases() -> tuple[list[TorchCase], list[FunctionCase]]:
    torch.manual_seed(3)
    sizes = {"in1_features": 3, "in2_features": 4, "out_features": 5}
    layers = [
        _layer("bilinear", "Bilinear", sizes, randn(6, 3), randn(6, 4)),
        _layer("bilinear_no_bias", "Bilinear", {**sizes, "bias": False}, randn(2, 3, 3),
               randn(2, 3, 4)),
        _layer("bilinear_unbatched", "Bilinear", sizes, randn(3), randn(4)),
    ]
    functions = [
        FunctionCase("f_bilinear", "bilinear",
                     {"input1": randn(2, 2, 3, 2), "input2": randn(2, 2, 3, 3),
                      "weight": randn(4, 2, 3), "bias": randn(4)}),
        FunctionCase("f_bilinear_no_bias", "bilinear",
                     {"input1": randn(5, 3), "input2": randn(5, 2), "weight": randn(1, 3, 2)}),
    ]
    return layers, functions


def bag_cases() -> tuple[list[TorchCase], list[FunctionCase]]:
    torch.manual_seed(4)
    flat = torch.tensor([1, 2, 0, 3, 3, 5, 2, 6, 6, 1, 4])
    offsets = torch.tensor([0, 2, 2, 5, 9])  # an empty bag, a bag of 3 and 3 (padding below)
    last = torch.tensor([0, 2, 2, 5, 9, 11])
    fixed = ints(7, 5, 3)
    fixed[1] = 3  # a bag of padding only, where padding_idx=3
    layers = [
        _layer("bag_mean_2d", "EmbeddingBag", {"num_embeddings": 7, "embedding_dim": 4}, fixed),
        _layer("bag_sum_offsets", "EmbeddingBag",
               {"num_embeddings": 7, "embedding_dim": 4, "mode": "sum"}, flat, offsets),
        _layer("bag_max_padding", "EmbeddingBag",
               {"num_embeddings": 7, "embedding_dim": 4, "mode": "max", "padding_idx": 3},
               flat, offsets),
        _layer("bag_mean_last_offset", "EmbeddingBag",
               {"num_embeddings": 7, "embedding_dim": 4, "include_last_offset": True,
                "padding_idx": -1}, flat, last),
        _layer("bag_sum_weighted", "EmbeddingBag",
               {"num_embeddings": 7, "embedding_dim": 4, "mode": "sum", "padding_idx": 3},
               flat, offsets, randn(11)),
    ]
    weight = randn(7, 3)
    tied = torch.tensor([[1.0, 2.0, 0.5], [1.0, 3.0, 0.5], [0.5, 3.0, 0.5], [1.0, 1.0, -1.0],
                         [2.0, 0.0, 1.0], [2.0, 0.0, 1.0], [-1.0, 0.0, 1.0]],
                        dtype=torch.float64)  # maxima shared by different rows of a bag
    functions = [
        FunctionCase(f"f_bag_{mode}_{form}", "embedding_bag",
                     {"input": x, "weight": weight, **({} if at is None else {"offsets": at})},
                     {"mode": mode, **extra})
        for mode in ("sum", "mean", "max")
        for form, x, at, extra in [
            ("2d", fixed, None, {}),
            ("2d_padding", fixed, None, {"padding_idx": 3}),
            ("offsets", flat, offsets, {}),
            ("offsets_padding", flat, offsets, {"padding_idx": 6}),
            ("last_offset", flat, last, {"include_last_offset": True}),
            ("empty_input", torch.tensor([], dtype=torch.long), torch.tensor([0, 0, 0]), {}),
        ]
    ] + [
        FunctionCase("f_bag_max_ties", "embedding_bag",
                     {"input": torch.tensor([0, 1, 2, 3, 4, 5, 6, 2, 0]), "weight": tied,
                      "offsets": torch.tensor([0, 4])}, {"mode": "max"}),
        FunctionCase("f_bag_weighted_2d", "embedding_bag",
                     {"input": fixed, "weight": weight, "per_sample_weights": randn(5, 3)},
                     {"mode": "sum", "padding_idx": 3}),
        FunctionCase("f_bag_weighted_offsets", "embedding_bag",
                     {"input": flat, "weight": weight, "offsets": last,
                      "per_sample_weights": randn(11)},
                     {"mode": "sum", "include_last_offset": True}),
    ]
    return layers, functions


def main() -> None:
    generator = torch.Generator().manual_seed(0)
    adaptive_layers, adaptive_functions = adaptive_cases()
    lp_layers, lp_functions = lp_cases()
    bilinear_layers, bilinear_functions = bilinear_cases()
    bag_layers, bag_functions = bag_cases()
    layers = adaptive_layers + lp_layers + norm_cases() + bilinear_layers + bag_layers
    functions = adaptive_functions + lp_functions + bilinear_functions + bag_functions
    tensors, described = recorded(layers, generator, with_repr=True)
    called: dict[str, Any] = {}
    for function in functions:
        names = list(function.inputs)
        module = _Call(function.function, names, function.kwargs)
        as_layer = TorchCase(function.name, "", {}, module, list(function.inputs.values()))
        for key, value in record(as_layer, generator).items():
            tensors[f"{function.name}/{key}"] = value.detach().clone().contiguous()
        called[function.name] = {"function": function.function, "names": names,
                                 "kwargs": function.kwargs}
    assert not set(described) & set(called), "case names must be unique"
    save_file(tensors, HERE / "pooling_layers.safetensors",
              metadata={"pooling_layers": json.dumps(described),
                        "pooling_functions": json.dumps(called), "torch": torch.__version__})


if __name__ == "__main__":
    main()
