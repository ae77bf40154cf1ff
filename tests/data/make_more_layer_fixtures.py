"""PyTorch references for the distances, the remaining activations and the remaining losses:
``more_layers.safetensors``.

    ../torch-venv/bin/python tests/data/make_more_layer_fixtures.py   # any environment with torch

Made with PyTorch 2.13.0 (CPU), float64. Two kinds of case, both in the layout of
``torch_fixture_writer.py`` (inputs, outputs, cotangents, input gradients), read by
``tests/grouped_fixtures.py``:

* layer cases (metadata ``more_layers``, described as ``torch_fixture_writer`` describes its
  ``cases``): a ``torch.nn`` module and the ``dparray.nn`` one of the same name and arguments,
  checked by ``torch_reference.check``;
* function cases (metadata ``functions``, JSON: for each case ``function`` -- its dotted
  name in dparray, ``dparray.cdist`` or ``dparray.nn.functional.pdist``, whose PyTorch twin
  is ``torch.cdist`` or ``torch.nn.functional.pdist`` -- and its keyword ``kwargs``), for
  what has no module.

Neither key is ``cases``, so ``test_torch_parity.py`` leaves the file to the h3 tests.

Inputs sit on the kinks on purpose (``|x| == lambd``, ``x == threshold``, equal rows, a
hinge at exactly 0, zero vectors, NaN), where the gradients are PyTorch's conventions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import torch
from safetensors.torch import save_file
from torch_fixture_writer import HERE, TorchCase, record, recorded

nn = torch.nn
NAN = float("nan")


@dataclass
class FunctionCase:
    name: str
    function: str  # dotted dparray name: "dparray.cdist", "dparray.nn.functional.pdist"
    kwargs: dict[str, Any]
    inputs: list[torch.Tensor]


class _Call(nn.Module):
    """A PyTorch function as a module without parameters, for ``record``."""

    def __init__(self, function: Any, kwargs: dict[str, Any]) -> None:
        super().__init__()
        self.function, self.kwargs = function, kwargs

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        return self.function(*inputs, **self.kwargs)


def _torch_function(name: str) -> Any:
    namespace, _, function = name.rpartition(".")
    return getattr({"dparray": torch, "dparray.nn.functional": nn.functional}[namespace],
                   function)


def _layer(name: str, layer: str, kwargs: dict[str, Any], *inputs: torch.Tensor,
           target: torch.Tensor | None = None, **plain: Any) -> TorchCase:
    """A case whose dparray layer takes the same keyword arguments; a ``target`` given here
    is passed by keyword and gets no gradient (PyTorch refuses one for some losses)."""
    keywords = {} if target is None else {"target": target}
    return TorchCase(name, layer, kwargs, getattr(nn, layer)(**kwargs), list(inputs),
                     tensor_kwargs=keywords, plain_kwargs=plain)


def distance_cases() -> tuple[list[TorchCase], list[FunctionCase]]:
    torch.manual_seed(0)
    a, b = torch.randn(5, 4), torch.randn(5, 4)
    b[1] = -2.0 * a[1]  # cosine -1
    a[2] = 0.0  # a zero vector: norm clamped to eps
    b[3] = a[3]  # equal rows: distance eps (pairwise) or 0 (eps=0)
    batched, row = torch.randn(3, 1, 4), torch.randn(4)
    layers = [
        _layer("cosine_default", "CosineSimilarity", {}, a, b),
        _layer("cosine_dim0_eps", "CosineSimilarity", {"dim": 0, "eps": 1e-3}, a, b),
        _layer("cosine_broadcast", "CosineSimilarity", {"dim": -1}, batched, a),
        _layer("pairwise_default", "PairwiseDistance", {}, a, b),
        _layer("pairwise_p1_keepdim", "PairwiseDistance", {"p": 1.0, "keepdim": True}, a, b),
        _layer("pairwise_p3", "PairwiseDistance", {"p": 3.0, "eps": 0.0}, a, b),
        _layer("pairwise_p_half", "PairwiseDistance", {"p": 0.5, "eps": 1e-3}, a, b),
        _layer("pairwise_inf", "PairwiseDistance", {"p": float("inf")}, a, b),
        _layer("pairwise_broadcast", "PairwiseDistance", {}, a, row),
        _layer("pairwise_unbatched", "PairwiseDistance", {"p": 1.5}, a[0], b[0]),
    ]
    x1, x2 = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    x2[1, 2] = x1[1, 0]  # a zero distance: gradient 0
    many, others = torch.randn(30, 3), torch.randn(27, 3)  # PyTorch's matrix-product form
    rows = torch.randn(5, 3)
    rows[3] = rows[1]  # a zero distance
    cdist, pdist = "dparray.cdist", "dparray.nn.functional.pdist"
    functions = [
        FunctionCase("cdist_batched", cdist, {}, [x1, x2]),
        FunctionCase("cdist_p1", cdist, {"p": 1.0}, [x1[1], x2[1]]),
        FunctionCase("cdist_p_half", cdist, {"p": 0.5}, [x1, x2]),
        FunctionCase("cdist_p3", cdist, {"p": 3.0}, [x1, x2]),
        FunctionCase("cdist_inf", cdist, {"p": float("inf")}, [x1, x2]),
        FunctionCase("cdist_p0", cdist, {"p": 0.0}, [x1, x2]),
        FunctionCase("cdist_broadcast_batch", cdist, {},
                     [torch.randn(2, 1, 3, 4), torch.randn(4, 5, 4)]),
        FunctionCase("cdist_matrix_product_form", cdist, {}, [many, others]),
        FunctionCase("cdist_no_matrix_product", cdist,
                     {"compute_mode": "donot_use_mm_for_euclid_dist"}, [many, others]),
        FunctionCase("pdist_default", pdist, {}, [rows]),
        FunctionCase("pdist_p1", pdist, {"p": 1.0}, [rows]),
        FunctionCase("pdist_p_1_5", pdist, {"p": 1.5}, [rows]),
        FunctionCase("pdist_inf", pdist, {"p": float("inf")}, [rows]),
        FunctionCase("pdist_one_row", pdist, {}, [rows[:1]]),
    ]
    return layers, functions


def activation_cases() -> list[TorchCase]:
    torch.manual_seed(1)
    kinks = torch.tensor([NAN, -0.5, 0.5, -1.2, 1.2, 0.0, -2.0, 0.3, 3.0, -0.1])
    values = torch.cat([kinks, torch.randn(10) * 2]).reshape(4, 5)
    images, planes = torch.randn(2, 3, 4, 5), torch.randn(3, 4, 5)
    return [
        _layer("glu_default", "GLU", {}, torch.randn(3, 6)),
        _layer("glu_dim0", "GLU", {"dim": 0}, torch.randn(4, 3, 2)),
        _layer("hardshrink_default", "Hardshrink", {}, values),
        _layer("hardshrink_1_2", "Hardshrink", {"lambd": 1.2}, values),
        _layer("hardshrink_negative", "Hardshrink", {"lambd": -0.5}, values),
        _layer("softshrink_default", "Softshrink", {}, values),
        _layer("softshrink_1_2", "Softshrink", {"lambd": 1.2}, values),
        _layer("softshrink_zero", "Softshrink", {"lambd": 0.0}, values),
        _layer("tanhshrink", "Tanhshrink", {}, values),
        _layer("threshold", "Threshold", {"threshold": 0.5, "value": -3.0}, values),
        _layer("threshold_negative", "Threshold", {"threshold": -1.2, "value": 2.0}, values),
        _layer("rrelu_eval_default", "RReLU", {}, values),
        _layer("rrelu_eval", "RReLU", {"lower": 0.2, "upper": 0.6}, values),
        _layer("softmax2d", "Softmax2d", {}, images),
        _layer("softmax2d_unbatched", "Softmax2d", {}, planes),
        _layer("lrn_3d", "LocalResponseNorm", {"size": 2}, torch.randn(2, 5, 3) * 3),
        _layer("lrn_4d", "LocalResponseNorm", {"size": 3, "alpha": 0.1, "beta": 0.5, "k": 2.0},
               torch.randn(2, 6, 3, 4) * 2),
        _layer("lrn_5d", "LocalResponseNorm", {"size": 4, "alpha": 0.01},
               torch.randn(1, 5, 2, 3, 2) * 4),
        _layer("lrn_size1", "LocalResponseNorm", {"size": 1, "alpha": 0.5, "beta": 1.0},
               torch.randn(2, 3, 4)),
        _layer("lrn_wider_than_channels", "LocalResponseNorm", {"size": 7, "alpha": 0.3},
               torch.randn(2, 4, 3)),
    ]


def loss_cases() -> list[TorchCase]:
    torch.manual_seed(2)
    anchor, positive, negative = torch.randn(5, 4), torch.randn(5, 4), torch.randn(5, 4)
    scores = torch.randn(6)
    scores[0] = 0.8  # margin - input == 0 under target -1: clamp's gradient passes
    signs = torch.tensor([1.0, -1.0, -1.0, 1.0, 0.0, -1.0])  # 0: both terms, as PyTorch
    logits = torch.randn(4, 3) * 2
    pm_one = torch.tensor([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0], [1.0, 1.0, -1.0],
                           [-1.0, 1.0, 1.0]])
    labels = torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.3, 1.0, 0.0], [1.0, 1.0, 1.0]])
    class_weight = torch.rand(3) + 0.5
    classes = torch.randn(5, 4)
    classes[2] = torch.tensor([1.5, 0.5, -3.0, 0.0])  # a hinge at exactly 0 (margin 1, y = 0)
    picks = torch.tensor([1, 3, 0, 0, 2])
    four_weights = torch.rand(4) + 0.5
    mean, sample = torch.randn(4, 3), torch.randn(4, 3)
    var = torch.rand(4, 3) + 0.1
    var[0, 0], var[1, 2] = 0.0, 1e-8  # clamped to eps: the gradient passes as if unclamped
    rates, log_rates = torch.rand(4, 3) * 3 + 0.1, torch.randn(4, 3)
    counts = torch.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, 5.0], [1.0, 1.0, 0.0], [7.0, 2.0, 4.0]])
    cases = []
    for reduction in ("mean", "sum", "none"):
        r = {"reduction": reduction}
        cases += [
            _layer(f"triplet_{reduction}", "TripletMarginLoss", {"margin": 0.7, **r},
                   anchor, positive, negative),
            _layer(f"triplet_swap_p1_{reduction}", "TripletMarginLoss",
                   {"margin": 2.0, "p": 1.0, "swap": True, **r}, anchor, positive, negative),
            _layer(f"hinge_embedding_{reduction}", "HingeEmbeddingLoss", {"margin": 0.8, **r},
                   scores, signs),
            _layer(f"soft_margin_{reduction}", "SoftMarginLoss", r, logits, target=pm_one),
            _layer(f"multilabel_soft_margin_{reduction}", "MultiLabelSoftMarginLoss",
                   {"weight": class_weight, **r}, logits, labels),
            _layer(f"multi_margin_{reduction}", "MultiMarginLoss", r, classes, picks),
            _layer(f"multi_margin_p2_weight_{reduction}", "MultiMarginLoss",
                   {"p": 2, "margin": 0.6, "weight": four_weights, **r}, classes, picks),
            _layer(f"gaussian_nll_{reduction}", "GaussianNLLLoss", r, mean, sample, var),
            _layer(f"poisson_nll_{reduction}", "PoissonNLLLoss", r, log_rates, counts),
            _layer(f"poisson_nll_rates_full_{reduction}", "PoissonNLLLoss",
                   {"log_input": False, "full": True, "eps": 1e-3, **r}, rates, target=counts),
        ]
    cases += [
        _layer("triplet_unbatched", "TripletMarginLoss", {"p": 3.0, "eps": 0.0}, anchor[0],
               positive[0], negative[0]),
        _layer("triplet_broadcast", "TripletMarginLoss", {"reduction": "none"}, anchor,
               positive, negative[:1]),
        _layer("multilabel_soft_margin_unweighted", "MultiLabelSoftMarginLoss",
               {"reduction": "none"}, logits, labels),
        _layer("multilabel_soft_margin_unbatched", "MultiLabelSoftMarginLoss",
               {"weight": class_weight}, logits[0], labels[0]),
        _layer("multi_margin_unbatched", "MultiMarginLoss", {"margin": 2.0, "reduction": "none"},
               classes[0], picks[1]),
        _layer("multi_margin_unbatched_1", "MultiMarginLoss", {"reduction": "none"},
               classes[0], picks[1:2]),
        _layer("gaussian_nll_full_eps", "GaussianNLLLoss", {"full": True, "eps": 0.05},
               mean, sample, var),
        _layer("gaussian_nll_shared_last_axis", "GaussianNLLLoss", {"reduction": "none"},
               mean, sample, var[:, 0]),
        _layer("gaussian_nll_size_one_axis", "GaussianNLLLoss", {"reduction": "sum"},
               mean, sample, var[:1]),
        _layer("gaussian_nll_number", "GaussianNLLLoss", {"reduction": "none"}, mean, sample,
               var=0.5),
        _layer("gaussian_nll_broadcast_target", "GaussianNLLLoss", {}, mean, sample[:, :1],
               var),
        _layer("poisson_nll_full_log_input", "PoissonNLLLoss", {"full": True}, log_rates,
               target=counts),  # no target gradient: PyTorch's is NaN at a zero count
    ]
    return cases


def main() -> None:
    generator = torch.Generator().manual_seed(0)
    distance_layers, functions = distance_cases()
    layers = distance_layers + activation_cases() + loss_cases()
    tensors, described = recorded(layers, generator)
    called: dict[str, Any] = {}
    for function in functions:
        module = _Call(_torch_function(function.function), function.kwargs)
        as_layer = TorchCase(function.name, "", {}, module, function.inputs)
        for key, value in record(as_layer, generator).items():
            tensors[f"{function.name}/{key}"] = value.detach().clone().contiguous()
        called[function.name] = {"function": function.function, "kwargs": function.kwargs}
    assert not set(described) & set(called), "case names must be unique"
    save_file(tensors, HERE / "more_layers.safetensors",
              metadata={"more_layers": json.dumps(described), "functions": json.dumps(called),
                        "torch": torch.__version__})


if __name__ == "__main__":
    main()
