"""The real-program benchmark models (``dparray.cli.models``, W7-W12) against PyTorch in
float64: the same architecture at small sizes, PyTorch's parameters loaded, then the model's
outputs, the workload's loss and the loss's gradient for every parameter compared with
``tests/data/workloads.safetensors`` (``tests/data/make_workload_fixtures.py``). The GPT's
output head is its token embedding (tied weights): one parameter, whose gradient sums both
uses, as PyTorch's does."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors import safe_open
from torch_reference import DATA

import dparray as dp
from dparray.cli import models
from dparray.nn import functional as F

PATH = DATA / "workloads.safetensors"


def _cases():
    with safe_open(str(PATH), framework="numpy") as file:
        described = json.loads(file.metadata()["workload_cases"])
        arrays = {name: {} for name in described}
        for key in file.keys():  # noqa: SIM118 - safe_open is not a mapping
            name, _, rest = key.partition("/")
            arrays[name][rest] = file.get_tensor(key)
    return {name: (info, arrays[name]) for name, info in described.items()}


CASES = _cases()


def _objective(case, model, inputs):
    """The model's outputs and the workload's loss, as ``dparray.cli.workloads`` computes
    them."""
    if case == "vae":
        x, noise = inputs
        outputs = model(x, noise)
        return outputs, models.vae_loss(outputs[0], x, outputs[1], outputs[2])
    x, y = inputs
    out = model(x)
    if case == "gpt" or case == "lstm_language_model":
        return (out,), F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    if case == "transformer_language_model":
        return (out,), F.nll_loss(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    if case == "mnist_net":
        return (out,), F.nll_loss(out, y)
    return (out,), F.cross_entropy(out, y)


def _build(info, arrays):
    sizes = {k: tuple(v) if isinstance(v, list) else v for k, v in info["sizes"].items()}
    model = getattr(models, info["model"])(**sizes, dtype="float64")
    for name, p in model.named_parameters():
        p.data = p.backend.asarray(arrays[f"state.{name}"])
    for name, buffer in model.named_buffers():
        buffer.data = buffer.backend.asarray(arrays[f"state.{name}"])
    model.set_training(info["training"])
    return model


@pytest.mark.parametrize("case", list(CASES))
def test_outputs_loss_and_gradients_are_pytorchs(case, kernels):
    info, arrays = CASES[case]
    model = _build(info, arrays)
    inputs = [dp.tensor(arrays[f"input.{i}"]) for i in range(2)]
    outputs, loss = _objective(case, model, inputs)
    for i, out in enumerate(outputs):
        np.testing.assert_allclose(out.numpy(), arrays[f"output.{i}"], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(loss.numpy(), arrays["loss"][0], rtol=1e-10)
    grads = loss.backward()
    names = [name for name, _ in model.named_parameters()]
    assert sorted(names) == sorted(k[5:] for k in arrays if k.startswith("grad."))
    for name, p in model.named_parameters():
        want = arrays[f"grad.{name}"]
        np.testing.assert_allclose(grads[p].numpy(), want, rtol=1e-8,
                                   atol=1e-10 * max(1.0, float(np.abs(want).max())),
                                   err_msg=f"gradient of {name}")
    for name, buffer in model.named_buffers():
        np.testing.assert_allclose(buffer.numpy(), arrays[f"after.{name}"], rtol=1e-10,
                                   atol=1e-12, err_msg=f"buffer {name} after the call")


def test_the_gpt_head_is_its_token_embedding():
    """Tied weights: the head and the embedding are one parameter, listed once; PyTorch's
    state dict names it twice, with one value."""
    info, arrays = CASES["gpt"]
    model = _build(info, arrays)
    assert model.lm_head.weight is model.wte.weight
    names = [name for name, _ in model.named_parameters()]
    assert "wte.weight" in names and "lm_head.weight" not in names
    np.testing.assert_array_equal(arrays["state.lm_head.weight"], arrays["state.wte.weight"])


def test_the_position_encoding_is_pytorchs():
    info, arrays = CASES["transformer_language_model"]
    sizes = info["sizes"]
    encoding = models.sinusoids(sizes["length"], sizes["width"], dtype="float64")
    np.testing.assert_allclose(encoding.numpy(), arrays["state.pe"], rtol=1e-13, atol=1e-15)
