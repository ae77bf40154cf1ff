"""Make ``mixed_precision.safetensors``: PyTorch's autocast, GradScaler and bfloat16/float16
tensors, so the suite checks dparray's mixed precision against PyTorch without PyTorch.

    python tests/data/make_mixed_precision_fixtures.py     # needs torch and safetensors

Made with PyTorch 2.13.0 (CPU). The file holds:

* ``exchange/<dtype>`` (BF16, F16): values with every special case -- signed zeros, the
  smallest subnormal, the largest finite value, infinities, NaN, values that round -- as
  PyTorch stores them, and ``exchange/<dtype>.float32``: PyTorch's float32 copies of them.
* ``<case>/in.<i>``: each op's inputs (float32, or int64 for targets), and ``<case>/out``:
  PyTorch's output, stored in the dtype PyTorch returned. The metadata ``autocast_cases``
  (JSON; not ``cases``, which marks the layer fixtures' layout) gives each case's op, autocast
  dtype, keyword arguments, which inputs were first rounded to the low-precision dtype (as a
  product's output would be), and how PyTorch computed it:

  - ``"autocast"``: under ``torch.autocast("cpu", dtype=...)`` -- the products (PyTorch's
    lower-precision list), the losses, ``cdist`` and ``prod`` (its float32 list), and ops in
    neither list (run in the dtype they get, promoting when dtypes mix);
  - ``"float32"``: the op on float32 copies of the low-precision inputs, which is what
    dparray's policy does for the reductions, softmax, normalisations and the two losses
    (multi-label soft margin, Gaussian NLL) that PyTorch's CPU lists leave in low precision
    (PyTorch's CUDA lists keep several of them in float32 too).

* metadata ``grad_scaler`` (JSON): PyTorch's ``GradScaler`` schedule -- the scale after each
  step and whether the optimizer stepped -- for a run whose gradients overflow at given steps.
"""

import json
import math
import pathlib

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

HERE = pathlib.Path(__file__).parent
DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}


def exchange_values(dtype: torch.dtype) -> torch.Tensor:
    info = torch.finfo(dtype)
    mantissa = {torch.bfloat16: 7, torch.float16: 10}[dtype]
    specials = [0.0, -0.0, 1.0, -2.5, 0.1, 1 / 3, info.max, -info.max, info.tiny,
                info.smallest_normal / 4, -info.smallest_normal / 2**mantissa, math.inf,
                -math.inf, math.nan, 1.0 + info.eps / 2, 1.0 + 3 * info.eps / 2, 65504.0, 1e-3]
    return torch.tensor(specials, dtype=torch.float64).to(dtype)


def randn(generator: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=generator)


def cases(g: torch.Generator) -> list[dict]:
    """Each case: op, inputs, kwargs, the indices of inputs rounded to the low dtype first,
    and how PyTorch computes it."""
    r = lambda *s: randn(g, *s)  # noqa: E731
    target = torch.tensor([0, 3, 1, 4, 2, 1])
    signs = torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    probs = torch.softmax(r(6, 5), dim=-1)
    found = [
        # products: PyTorch's lower-precision list
        ("matmul", [r(5, 7), r(7, 3)], {}, [], "autocast"),
        ("matmul", [r(2, 5, 7), r(2, 7, 3)], {}, [], "autocast"),
        ("linear", [r(4, 6), r(3, 6), r(3)], {}, [], "autocast"),
        ("conv1d", [r(2, 3, 9), r(4, 3, 3), r(4)], {"padding": 1}, [], "autocast"),
        ("conv2d", [r(2, 3, 6, 6), r(4, 3, 3, 3), r(4)], {"stride": 2, "padding": 1}, [],
         "autocast"),
        ("conv_transpose1d", [r(2, 3, 5), r(3, 2, 3), r(2)], {"stride": 2}, [], "autocast"),
        ("conv_transpose2d", [r(2, 3, 4, 4), r(3, 2, 3, 3), r(2)], {"stride": 2}, [],
         "autocast"),
        ("einsum", [r(2, 4, 5), r(2, 5, 3)], {"subscripts": "bij,bjk->bik"}, [], "autocast"),
        ("addmm", [r(3), r(4, 5), r(5, 3)], {"alpha": 0.5}, [], "autocast"),
        ("baddbmm", [r(2, 4, 3), r(2, 4, 5), r(2, 5, 3)], {"beta": 0.5}, [], "autocast"),
        ("scaled_dot_product_attention", [r(2, 3, 5, 4), r(2, 3, 6, 4), r(2, 3, 6, 4)], {},
         [], "autocast"),
        ("scaled_dot_product_attention", [r(2, 2, 5, 4), r(2, 2, 5, 4), r(2, 2, 5, 4)],
         {"is_causal": True}, [], "autocast"),
        # PyTorch's float32 list: low-precision inputs, float32 results
        ("cross_entropy", [r(6, 5), target], {}, [0], "autocast"),
        ("nll_loss", [torch.log_softmax(r(6, 5), dim=-1), target], {}, [0], "autocast"),
        ("mse_loss", [r(6, 5), r(6, 5)], {}, [0, 1], "autocast"),
        ("l1_loss", [r(6, 5), r(6, 5)], {}, [0, 1], "autocast"),
        ("smooth_l1_loss", [r(6, 5), r(6, 5)], {}, [0, 1], "autocast"),
        ("huber_loss", [r(6, 5), r(6, 5)], {"delta": 0.5}, [0, 1], "autocast"),
        ("binary_cross_entropy_with_logits", [r(6, 5), torch.rand(6, 5, generator=g)], {},
         [0, 1], "autocast"),
        ("binary_cross_entropy", [torch.rand(6, 5, generator=g) * 0.9 + 0.05,
                                  torch.rand(6, 5, generator=g)], {}, [0, 1], "autocast"),
        ("kl_div", [torch.log_softmax(r(6, 5), dim=-1), probs], {"reduction": "batchmean"},
         [0, 1], "autocast"),
        ("cosine_embedding_loss", [r(6, 5), r(6, 5), signs], {}, [0, 1], "autocast"),
        ("margin_ranking_loss", [r(6), r(6), signs], {"margin": 0.2}, [0, 1], "autocast"),
        ("prod", [1.0 + 0.1 * r(3, 5)], {"dim": 1}, [0], "autocast"),
        ("hinge_embedding_loss", [r(6, 5), torch.sign(r(6, 5))], {"margin": 0.5}, [0],
         "autocast"),
        ("soft_margin_loss", [r(6, 5), torch.sign(r(6, 5))], {}, [0], "autocast"),
        ("multi_margin_loss", [r(6, 5), target], {"margin": 0.5}, [0], "autocast"),
        ("triplet_margin_loss", [r(6, 5), r(6, 5), r(6, 5)], {}, [0, 1, 2], "autocast"),
        ("poisson_nll_loss", [r(6, 5), torch.rand(6, 5, generator=g) * 4], {}, [0, 1],
         "autocast"),
        ("cdist", [r(5, 4), r(6, 4)], {}, [0, 1], "autocast"),
        # dparray's float32 policy: the op on float32 copies
        ("sum", [r(4, 300)], {"dim": 1}, [0], "float32"),
        ("mean", [r(4, 300)], {"dim": 1}, [0], "float32"),
        ("var", [r(4, 30)], {"dim": 1}, [0], "float32"),
        ("std", [r(4, 30)], {"dim": 1}, [0], "float32"),
        ("logsumexp", [r(4, 30)], {"dim": 1}, [0], "float32"),
        ("cumsum", [r(4, 30)], {"dim": 1}, [0], "float32"),
        ("cumprod", [1.0 + 0.05 * r(4, 10)], {"dim": 1}, [0], "float32"),
        ("logcumsumexp", [r(4, 10)], {"dim": 1}, [0], "float32"),
        ("softmax", [r(4, 30)], {"dim": -1}, [0], "float32"),
        ("log_softmax", [r(4, 30)], {"dim": -1}, [0], "float32"),
        ("layer_norm", [r(4, 8), r(8), r(8)], {}, [0], "float32"),
        ("batch_norm", [r(6, 4, 5)], {}, [0], "float32"),
        ("group_norm", [r(3, 4, 5), r(4), r(4)], {"num_groups": 2}, [0], "float32"),
        ("instance_norm", [r(3, 4, 5)], {}, [0], "float32"),
        ("rms_norm", [r(4, 8), r(8)], {}, [0], "float32"),
        ("multilabel_soft_margin_loss", [r(6, 5), (r(6, 5) > 0).float()], {}, [0, 1],
         "float32"),
        ("gaussian_nll_loss", [r(6, 5), r(6, 5), torch.rand(6, 5, generator=g) + 0.1], {},
         [0, 1, 2], "float32"),
        # in no list: the dtype they are given, promoting when dtypes mix
        ("relu", [r(4, 6)], {}, [0], "autocast"),
        ("gelu", [r(4, 6)], {}, [0], "autocast"),
        ("tanh", [r(4, 6)], {}, [0], "autocast"),
        ("add", [r(4, 6), r(4, 6)], {}, [0], "autocast"),
        ("add", [r(4, 6), r(4, 6)], {}, [0, 1], "autocast"),
        ("add_scalar", [r(4, 6)], {"other": 0.5}, [0], "autocast"),
    ]
    return [{"op": op, "inputs": inputs, "kwargs": kwargs, "low": low, "how": how}
            for op, inputs, kwargs, low, how in found]


def run(op: str, inputs: list[torch.Tensor], kwargs: dict) -> torch.Tensor:
    if op == "einsum":
        return torch.einsum(kwargs["subscripts"], *inputs)
    if op in ("sum", "mean", "var", "std", "logsumexp", "cumsum", "cumprod", "logcumsumexp",
              "prod", "softmax", "log_softmax"):
        x = inputs[0]
        if op in ("var", "std"):
            return getattr(torch, op)(x, correction=0, **kwargs)
        return getattr(torch, op)(x, **kwargs)
    if op == "layer_norm":
        x, w, b = inputs
        return F.layer_norm(x, (x.shape[-1],), w, b)
    if op == "batch_norm":
        return F.batch_norm(inputs[0], None, None, training=True)
    if op == "rms_norm":
        x, w = inputs
        return F.rms_norm(x, (x.shape[-1],), w, eps=1e-6)
    if op == "group_norm":
        x, w, b = inputs
        return F.group_norm(x, kwargs["num_groups"], w, b)
    if op == "add":
        return inputs[0] + inputs[1]
    if op == "add_scalar":
        return inputs[0] + kwargs["other"]
    if op in ("relu", "gelu", "tanh"):
        return getattr(F, op)(inputs[0])
    if op == "matmul":
        return inputs[0] @ inputs[1]
    if op in ("addmm", "baddbmm", "cdist"):
        return getattr(torch, op)(*inputs, **kwargs)
    return getattr(F, op)(*inputs, **kwargs)


def grad_scaler_schedule() -> dict:
    """PyTorch's scale after each of 14 steps, overflowing at some, for two configurations."""
    runs = []
    for config in ({"init_scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                    "growth_interval": 3},
                   {"init_scale": 1000.0, "growth_factor": 3.0, "backoff_factor": 0.3,
                    "growth_interval": 2}):
        overflow = [2, 3, 9]
        w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
        opt = torch.optim.SGD([w], lr=0.1)
        scaler = torch.amp.GradScaler("cpu", **config)
        scales, stepped = [], []
        for step in range(14):
            loss = (w * w).sum() * (math.inf if step in overflow else 1.0)
            opt.zero_grad()
            scaler.scale(loss).backward()
            before = w.detach().clone()
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
            stepped.append(not torch.equal(before, w.detach()))
        runs.append({"config": config, "overflow": overflow, "scales": scales,
                     "stepped": stepped, "state": scaler.state_dict()})
    return {"runs": runs}


def main() -> None:
    tensors: dict[str, torch.Tensor] = {}
    for name, dtype in DTYPES.items():
        values = exchange_values(dtype)
        tensors[f"exchange/{name}"] = values
        tensors[f"exchange/{name}.float32"] = values.float()
    described = []
    g = torch.Generator().manual_seed(0)
    for name, dtype in DTYPES.items():
        for index, case in enumerate(cases(g)):
            key = f"{name}/{index:02d}.{case['op']}"
            inputs = case["inputs"]
            for i, x in enumerate(inputs):
                tensors[f"{key}/in.{i}"] = x.clone()
            given = [x.to(dtype) if i in case["low"] else x for i, x in enumerate(inputs)]
            if case["how"] == "float32":
                out = run(case["op"], [x.float() for x in given], case["kwargs"])
            else:
                with torch.autocast("cpu", dtype=dtype):
                    out = run(case["op"], given, case["kwargs"])
            tensors[f"{key}/out"] = out.detach().contiguous()
            described.append({"key": key, "op": case["op"], "dtype": name,
                              "kwargs": case["kwargs"], "low": case["low"], "how": case["how"],
                              "inputs": len(inputs)})
    metadata = {"autocast_cases": json.dumps(described),
                "grad_scaler": json.dumps(grad_scaler_schedule()), "torch": torch.__version__}
    save_file(tensors, HERE / "mixed_precision.safetensors", metadata=metadata)


if __name__ == "__main__":
    main()
