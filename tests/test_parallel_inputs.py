"""DataParallel with several inputs, keyword inputs and structured outputs: equal to the
unwrapped module, outputs and gradients, in float64."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import nn

F64 = dp.float64


class TwoInputs(nn.Module):
    """Uses a positional input, a keyword input with the batch axis, a replicated tensor and a
    plain number; returns a dict holding a tuple, a list and a constant."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4, dtype=F64)
        self.other = nn.Linear(2, 4, dtype=F64)

    def forward(self, x, scale, *, context, bias, flag=True):
        assert flag is True
        hidden = self.fc(x) * scale + self.other(context) + bias
        return {"hidden": (hidden, hidden.tanh()), "rows": [x * 2.0], "note": "constant"}


def _leaves(out):
    return [*out["hidden"], *out["rows"]]


@pytest.mark.parametrize("execution", ["threads", "inline"])
@pytest.mark.parametrize("workers", [2, 3])
def test_several_inputs_and_a_dict_output_equal_the_unwrapped_module(execution, workers, backend,
                                                                     rng):
    dp.manual_seed(0)
    module = TwoInputs()
    x = to_tensor(rng.standard_normal((7, 3)), requires_grad=True)
    context = to_tensor(rng.standard_normal((7, 2)))
    bias = to_tensor(rng.standard_normal(4), requires_grad=True)  # no batch axis: replicated
    weights = [to_tensor(rng.standard_normal(s)) for s in ((7, 4), (7, 4), (7, 3))]

    def run(model):
        out = model(x, 0.5, context=context, bias=bias, flag=True)
        assert out["note"] == "constant" and isinstance(out["hidden"], tuple)
        loss = sum((leaf * w).sum() for leaf, w in zip(_leaves(out), weights, strict=True))
        return [leaf.numpy() for leaf in _leaves(out)], loss.backward()

    expected, expected_grads = run(module)
    got, grads = run(dp.DataParallel(module, workers, execution=execution))
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert list(grads) == list(expected_grads)
    for variable in expected_grads:
        np.testing.assert_allclose(grads[variable].numpy(), expected_grads[variable].numpy(),
                                   rtol=1e-12, atol=1e-14)


class Masked(nn.Module):
    def forward(self, x, mask):
        return x @ dp.where(mask, dp.ones(*mask.shape, dtype=F64), 0.0)


def test_replicate_passes_a_batch_sized_tensor_whole(backend, rng):
    x = to_tensor(rng.standard_normal((4, 4)), requires_grad=True)
    mask = dp.tensor(rng.standard_normal((4, 4)) > 0)  # (L, L) with L == batch
    expected = Masked()(x, mask=mask).numpy()
    model = dp.DataParallel(Masked(), 2, execution="threads", replicate=["mask"])
    np.testing.assert_allclose(model(x, mask=mask).numpy(), expected, rtol=1e-12)
    split = dp.DataParallel(Masked(), 2, execution="threads")  # the mask would be split
    with pytest.raises(Exception) as raised:
        split(x, mask=mask)
    failures = getattr(raised.value, "exceptions", [raised.value])  # one, or a group of two
    assert all(isinstance(f, dp.ChunkError) and "matmul" in str(f) for f in failures)


class ReturnsMixed(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2, dtype=F64)

    def forward(self, x):
        logits = self.fc(x)
        return logits, logits.argmax(axis=1)


def test_a_constant_output_beside_a_tracked_one(backend, rng):
    module = ReturnsMixed()
    x = to_tensor(rng.standard_normal((5, 3)))
    logits, labels = dp.DataParallel(module, 2, execution="threads")(x)
    expected_logits, expected_labels = module(x)
    np.testing.assert_array_equal(labels.numpy(), expected_labels.numpy())
    assert labels.grad_fn is None and logits.grad_fn is not None
    grads = logits.sum().backward()
    want = expected_logits.sum().backward()
    np.testing.assert_allclose(grads[module.fc.weight].numpy(), want[module.fc.weight].numpy(),
                               rtol=1e-12)


class Structured(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def forward(self, x):
        return (x, x) if self.kind == "tuple" and x.shape[0] == 2 else (x,)


def test_chunks_must_return_one_structure(backend):
    model = dp.DataParallel(Structured("tuple"), 2, execution="threads")
    with pytest.raises(ValueError, match="chunk 1 returned a different structure"):
        model(dp.ones(3, 2))  # chunks of 2 and 1 rows return tuples of 2 and 1


class NoTensor(nn.Module):
    def forward(self, x):
        return {"size": x.shape[0]}


def test_an_output_without_tensors_is_a_clear_error(backend):
    with pytest.raises(TypeError, match="returned dict with no tensor in it"):
        dp.DataParallel(NoTensor(), 2, execution="threads")(dp.ones(4, 2))


def test_arguments_without_a_tensor_are_refused(backend):
    with pytest.raises(TypeError, match="takes a Tensor batch, got int, str"):
        dp.DataParallel(nn.Identity(), 2)(3, "x")
