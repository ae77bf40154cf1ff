"""DataParallel: same results as the unwrapped module, real parallelism, context, errors."""

from __future__ import annotations

import copy
import sys
import threading
import time
from typing import ClassVar

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import nn
from dparray.autograd import Function
from dparray.nn import functional as F
from dparray.parallel import auto as _auto

F64 = dp.float64


class UsesOutsideTensor(nn.Module):
    def __init__(self, outside):
        super().__init__()
        self.fc = nn.Linear(3, 3, dtype=F64)
        self.outside = outside  # a variable made outside the module: a parameter here

    def forward(self, x):
        return self.fc(x) * self.outside


def _modules():
    outside = dp.randn(3, dtype=F64).requires_grad_()
    return {
        "linear": (lambda: nn.Linear(3, 2, dtype=F64), (3,), "float"),
        "deep_mlp": (lambda: nn.Sequential(*[m for _ in range(4) for m in (
            nn.Linear(3, 3, dtype=F64), nn.Tanh())], nn.Linear(3, 2, dtype=F64)), (3,), "float"),
        "layernorm_gelu": (lambda: nn.Sequential(nn.Linear(3, 4, dtype=F64),
                                                 nn.LayerNorm(4, dtype=F64), nn.GELU()),
                           (3,), "float"),
        "embedding": (lambda: nn.Embedding(6, 3, dtype=F64), (2,), "index"),
        "convnet": (lambda: nn.Sequential(nn.Conv2d(1, 2, 3, padding=1, dtype=F64), nn.ReLU(),
                                          nn.MaxPool2d(2), nn.Flatten(),
                                          nn.Linear(2 * 2 * 2, 2, dtype=F64)),
                    (1, 4, 4), "float"),
        "outside_tensor": (lambda: UsesOutsideTensor(outside), (3,), "float"),
    }


def _batch(rng, kind, batch, shape):
    if kind == "index":
        return dp.tensor(rng.integers(0, 6, (batch, *shape)))
    return to_tensor(rng.standard_normal((batch, *shape)))


def _outputs_and_grads(model, x, weights):
    out = model(x)
    grads = (out * weights).sum().backward()
    return out.numpy(), grads


@pytest.mark.parametrize("name", list(_modules()))
@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_same_outputs_and_gradients_as_the_unwrapped_module(name, execution, backend, rng):
    dp.manual_seed(0)
    factory, shape, kind = _modules()[name]
    module = factory()
    for batch in range(1, 8):
        x = _batch(rng, kind, batch, shape)
        out_shape = module(x).shape
        for workers in range(1, 6):
            model = dp.DataParallel(module, workers, execution=execution)
            weights = to_tensor(rng.standard_normal(out_shape))
            expected, expected_grads = _outputs_and_grads(module, x, weights)
            got, grads = _outputs_and_grads(model, x, weights)
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
            assert list(grads) == list(expected_grads)
            for variable in expected_grads:
                np.testing.assert_allclose(grads[variable].numpy(),
                                           expected_grads[variable].numpy(),
                                           rtol=1e-12, atol=1e-13)


def test_an_input_that_requires_grad(backend, rng):
    module = nn.Sequential(nn.Linear(3, 4, dtype=F64), nn.Tanh())
    x = to_tensor(rng.standard_normal((5, 3)), requires_grad=True)
    expected = (module(x * 2.0) ** 2).sum().backward()
    # x * 2.0 is made before the split: its node lies outside the chunks' sub-graphs
    got = (dp.DataParallel(module, 3, execution="threads")(x * 2.0) ** 2).sum().backward()
    for variable in expected:
        np.testing.assert_allclose(got[variable].numpy(), expected[variable].numpy(),
                                   rtol=1e-12)
    assert x in got


def test_nested_and_inside_a_sequential(backend, rng):
    inner = nn.Sequential(nn.Linear(3, 3, dtype=F64), nn.GELU())
    nested = nn.Sequential(dp.DataParallel(dp.DataParallel(inner, 2), 3),
                           nn.Linear(3, 1, dtype=F64))
    plain = nn.Sequential(inner, nested[1])
    x = to_tensor(rng.standard_normal((7, 3)))
    assert [n for n, _ in nested.named_parameters()] == ["0.0.weight", "0.0.bias", "1.weight",
                                                         "1.bias"]
    expected = plain(x).sum().backward()
    got = nested(x).sum().backward()
    for variable in expected:
        np.testing.assert_allclose(got[variable].numpy(), expected[variable].numpy(), rtol=1e-12)


class Sleep(Function):
    """Sleeps (releasing the GIL) in forward and backward and records when, per thread."""

    log: ClassVar[list] = []

    def forward(self, x):
        self.log.append(("forward", *_timed_sleep()))
        return x * 1.0

    def backward(self, grad):
        self.log.append(("backward", *_timed_sleep()))
        return grad


def _timed_sleep():
    start = time.perf_counter()
    time.sleep(0.05)
    return threading.get_ident(), start, time.perf_counter()


class Sleeper(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = dp.ones(1, requires_grad=True)

    def forward(self, x):
        return Sleep()(x * self.scale)


def test_chunks_overlap_in_forward_and_backward():
    Sleep.log = []
    model = dp.DataParallel(Sleeper(), 2, execution="threads")
    model(dp.ones(4, 3)).sum().backward()
    for phase in ("forward", "backward"):
        (t0, s0, e0), (t1, s1, e1) = [entry[1:] for entry in Sleep.log if entry[0] == phase]
        assert t0 != t1  # two threads
        assert s0 < e1 and s1 < e0  # and their intervals overlap


def test_repeatable_bitwise_with_dropout(backend, rng):
    x = to_tensor(rng.standard_normal((9, 4)))

    def run():
        dp.manual_seed(11)
        module = nn.Sequential(nn.Linear(4, 8, dtype=F64), nn.Dropout(0.3),
                               nn.Linear(8, 2, dtype=F64))
        grads = (dp.DataParallel(module, 3, execution="threads")(x) ** 2).sum().backward()
        return [g.numpy() for g in grads.values()]

    first, second = run(), run()
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))


class Recorder(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = dp.ones(1, requires_grad=True)
        self.seen = []

    def forward(self, x):
        self.seen.append((x.backend.name, dp.is_grad_enabled(), self.is_training(),
                          dp.rand(3).tolist(), threading.get_ident()))
        return x * self.w


def test_context_reaches_the_workers():
    recorder = Recorder().to("array_api_strict")
    model = dp.DataParallel(recorder, 2, execution="threads").eval()
    with dp.use_backend("array_api_strict"), dp.no_grad():
        dp.manual_seed(4)
        model(dp.ones(4, 2))
    first = sorted(recorder.seen, key=lambda s: s[3])
    assert [s[:3] for s in first] == [("array_api_strict", False, False)] * 2
    assert first[0][3] != first[1][3]  # each chunk draws from a stream of its own
    assert len({s[4] for s in first}) == 2
    recorder.seen.clear()
    with dp.use_backend("array_api_strict"), dp.no_grad():
        dp.manual_seed(4)
        model(dp.ones(4, 2))
    assert sorted(s[3] for s in recorder.seen) == sorted(s[3] for s in first)  # and repeats


def test_sync_batch_norm_equals_batch_norm_on_the_whole_batch(backend, rng):
    def build(norm):
        dp.manual_seed(3)
        return nn.Sequential(nn.Linear(4, 5, dtype=F64), norm(5, dtype=F64), nn.Tanh(),
                             nn.Linear(5, 2, dtype=F64))

    plain, synced = build(nn.BatchNorm1d), build(nn.SyncBatchNorm)
    x = to_tensor(rng.standard_normal((11, 4)))
    weights = to_tensor(rng.standard_normal((11, 2)))
    expected = plain(x)
    expected_grads = (expected * weights).sum().backward()
    out = dp.DataParallel(synced, 3)(x)
    grads = (out * weights).sum().backward()
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)
    for p, q in zip(plain.parameters(), synced.parameters(), strict=True):
        np.testing.assert_allclose(grads[q].numpy(), expected_grads[p].numpy(), rtol=1e-9,
                                   atol=1e-12)
    for a, b in zip(plain.buffers(), synced.buffers(), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)


@pytest.mark.parametrize("workers", [2, 3])
def test_sync_batch_norm_of_images_equals_batch_norm_2d_on_the_whole_batch(workers, backend,
                                                                          rng):
    def build():
        dp.manual_seed(4)
        return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1, dtype=F64), nn.BatchNorm2d(3, dtype=F64),
                             nn.ReLU(), nn.Flatten(), nn.Linear(3 * 16, 2, dtype=F64))

    plain, synced = build(), nn.SyncBatchNorm.convert_sync_batchnorm(build())
    assert isinstance(synced[1], nn.SyncBatchNorm)
    x = to_tensor(rng.standard_normal((7, 2, 4, 4)))
    weights = to_tensor(rng.standard_normal((7, 2)))
    expected = plain(x)
    expected_grads = (expected * weights).sum().backward()
    model = dp.DataParallel(synced, workers)
    out = model(x)
    assert model.last_execution == "threads"
    grads = (out * weights).sum().backward()
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)
    for p, q in zip(plain.parameters(), synced.parameters(), strict=True):
        np.testing.assert_allclose(grads[q].numpy(), expected_grads[p].numpy(), rtol=1e-9,
                                   atol=1e-12)
    for a, b in zip(plain.buffers(), synced.buffers(), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)


@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_batch_norm_2d_normalises_each_chunk_and_keeps_chunk_0s_statistics(execution, backend,
                                                                           rng):
    norm, alone = nn.BatchNorm2d(2, dtype=F64), nn.BatchNorm2d(2, dtype=F64)
    x = rng.standard_normal((5, 2, 3, 3))
    out = dp.DataParallel(norm, 2, execution=execution)(to_tensor(x)).numpy()
    for chunk in (slice(0, 3), slice(3, 5)):
        part = x[chunk]
        mean, var = part.mean((0, 2, 3), keepdims=True), part.var((0, 2, 3), keepdims=True)
        np.testing.assert_allclose(out[chunk], (part - mean) / np.sqrt(var + 1e-5), rtol=1e-10)
    alone(to_tensor(x[:3]))  # the running statistics are chunk 0's, as in PyTorch
    for a, b in zip(norm.buffers(), alone.buffers(), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_convert_sync_batchnorm_keeps_the_tensors(backend):
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    weight = model[1].weight
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[1], nn.SyncBatchNorm) and converted[1].weight is weight


def test_plain_batch_norm_normalises_each_chunk(backend, rng):
    norm = nn.BatchNorm1d(2, dtype=F64)
    x = rng.standard_normal((6, 2))
    out = dp.DataParallel(norm, 2, execution="threads")(to_tensor(x)).numpy()
    for chunk in (slice(0, 3), slice(3, 6)):
        part = x[chunk]
        expected = (part - part.mean(0)) / np.sqrt(part.var(0) + 1e-5)
        np.testing.assert_allclose(out[chunk], expected, rtol=1e-10)
    with pytest.raises(dp.ChunkError, match="more than one value per channel") as error:
        dp.DataParallel(norm, 3, execution="threads")(to_tensor(x[:5]))  # chunks of 2, 2, 1
    assert isinstance(error.value.__cause__, ValueError)


class FailsOn(nn.Module):
    def __init__(self, bad_rows):
        super().__init__()
        self.bad_rows = bad_rows

    def forward(self, x):
        if x.shape[0] in self.bad_rows:
            raise KeyError(f"no rows of size {x.shape[0]}")
        return x * 2.0


def test_a_failing_chunk_is_named_and_the_pool_stays_usable(backend):
    model = dp.DataParallel(FailsOn({3}), 4, execution="threads")
    x = dp.ones(15, 2)  # chunks of 4, 4, 4, 3: chunk 3 fails
    with pytest.raises(dp.ChunkError, match="chunk 3 of 4 failed: KeyError") as error:
        model(x)
    assert isinstance(error.value.__cause__, KeyError) and error.value.chunk == 3
    model.module.bad_rows = set()
    assert model(x).tolist() == (x * 2.0).tolist()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="ExceptionGroup is new in Python 3.11")
def test_several_failing_chunks_are_all_reported(backend):
    model = dp.DataParallel(FailsOn({2}), 4, execution="threads")
    with pytest.raises(ExceptionGroup) as error:  # noqa: F821
        model(dp.ones(8, 1))
    assert [e.chunk for e in error.value.exceptions] == [0, 1, 2, 3]


def test_bad_arguments_are_refused_before_any_work(backend):
    with pytest.raises(ValueError, match="num_workers must be at least 1, got 0"):
        dp.DataParallel(nn.Identity(), 0)
    with pytest.raises(TypeError, match=r"num_workers must be an int, got 2\.0"):
        dp.DataParallel(nn.Identity(), 2.0)
    with pytest.raises(TypeError, match="replicate must be a collection of keyword names"):
        dp.DataParallel(nn.Identity(), 2, replicate="mask")
    with pytest.raises(TypeError, match="wraps a Module"):
        dp.DataParallel(lambda x: x, 2)
    with pytest.raises(ValueError, match="execution must be one of"):
        dp.DataParallel(nn.Identity(), 2, execution="processes")
    model = dp.DataParallel(nn.Identity(), 2)
    with pytest.raises(TypeError, match="takes a Tensor batch, got list"):
        model([1.0, 2.0])
    with pytest.raises(ValueError, match="needs a batch axis"):
        model(dp.tensor(1.0))
    with pytest.raises(ValueError, match=r"empty batch \(shape \(0, 3\)\)"):
        model(dp.zeros(0, 3))


class LossInside(nn.Module):
    def forward(self, x):
        return (x * x).sum()


def test_a_0d_output_per_chunk_is_a_clear_error(backend):
    with pytest.raises(ValueError, match="returned a 0-d tensor for each chunk"):
        dp.DataParallel(LossInside(), 2, execution="threads")(dp.ones(4, 2))


def test_also_under_nn():
    assert dp.nn.DataParallel is dp.DataParallel


class Steps(dp.DataParallel):
    """Records which steps ran, and what each returned."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen = []

    def scatter(self, call, count):
        chunks = super().scatter(call, count)
        self.seen.append(("scatter", [args[0].shape for args, _ in chunks]))
        return chunks

    def parallel_apply(self, chunks, plan):
        outputs = super().parallel_apply(chunks, plan)
        self.seen.append(("parallel_apply", plan.execution, [o.shape for o in outputs]))
        return outputs

    def gather(self, outputs, plan):
        joined = super().gather(outputs, plan)
        self.seen.append(("gather", joined.shape))
        return joined


class CoupledLinear(nn.Linear):
    """A Linear that says it couples the rows, so that inline runs the chunks too."""

    def couples_rows(self):
        return True


@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_the_steps_are_methods_a_subclass_overrides(backend, execution, rng):
    layer = CoupledLinear(3, 2, dtype=F64)
    x = to_tensor(rng.standard_normal((5, 3)), backend).requires_grad_()
    model = Steps(layer, 2, execution=execution)
    out = model(x)
    assert model.last_execution == execution
    assert model.seen == [("scatter", [(3, 3), (2, 3)]),
                          ("parallel_apply", execution, [(3, 2), (2, 2)]), ("gather", (5, 2))]
    grads = (out * out).sum().backward()
    expected = (layer(x) ** 2).sum().backward()
    for tensor in (x, layer.weight, layer.bias):
        np.testing.assert_allclose(grads[tensor].numpy(), expected[tensor].numpy(), rtol=1e-12)


def test_a_call_run_whole_takes_none_of_the_steps(backend):
    model = Steps(nn.Linear(3, 2), 1)
    model(dp.ones(4, 3))
    assert model.last_execution == "whole" and model.seen == []


def test_a_scatter_that_returns_another_chunk_count_is_refused(backend):
    class Drops(dp.DataParallel):
        def scatter(self, call, count):
            return super().scatter(call, count)[:-1]

    with pytest.raises(ValueError, match=r"Drops.scatter returned 1 chunks for a call planned "
                                         r"in 2"):
        Drops(nn.Linear(3, 2), 2, execution="threads")(dp.ones(4, 3))


def test_the_specifications_api(backend, tmp_path):
    module = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model = dp.DataParallel(module, 2)
    assert model.module is module and model.num_workers == 2
    assert model.inner() is module and model.inner_mut() is module
    assert model.into_inner() is module
    assert [n for n, _ in model.named_parameters()] == [n for n, _ in module.named_parameters()]
    assert model.parameters() == module.parameters()
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert model.num_parameters() == module.num_parameters() == 26
    module[0].weight.is_variable = False
    assert model.trainable_params_count() == 14
    assert all(not p.is_variable for p in model.frozen_parameters())
    assert model.is_training()
    model.set_training(False)
    assert not module[2].is_training() and not model.is_training()
    model.train()
    assert module.is_training()
    assert model.append == module.append  # attributes fall through to the module
    prefixed = {f"module.{k}": v for k, v in model.state_dict().items()}
    model.load_state_dict(prefixed)
    path = tmp_path / "model.safetensors"
    dp.save(model.state_dict(), path)
    module.load_state_dict(dp.load(path))
    assert "DataParallel(num_workers=2, execution='auto',\n  (module): Sequential(" in repr(model)


def test_copies(backend):
    model = dp.DataParallel(nn.Linear(2, 2), 3)
    shallow = copy.copy(model)
    assert shallow.module is model.module and shallow.num_workers == 3
    for deep in (copy.deepcopy(model), model.clone()):
        assert deep.module is not model.module and deep.num_workers == 3
        assert deep.module.weight is not model.module.weight
        np.testing.assert_array_equal(deep.module.weight.numpy(), model.module.weight.numpy())
        assert deep(dp.ones(4, 2)).shape == (4, 2)


class Sleeps(nn.Module):
    """Waits (releasing the GIL) in proportion to its rows: threads halve the wait."""

    def forward(self, x):
        time.sleep(0.004 * x.shape[0])
        return x * 2.0


class Spins(nn.Module):
    """Holds the GIL for a fixed time per call: chunks on threads only add calls."""

    def forward(self, x):
        end = time.perf_counter() + 0.01
        while time.perf_counter() < end:
            pass
        return x * 2.0


@pytest.mark.parametrize(("module", "winner"), [(Sleeps, "threads"), (Spins, "whole")])
def test_auto_measures_and_keeps_the_faster_execution(module, winner, backend, monkeypatch):
    monkeypatch.setattr(_auto, "MEASURE_SECONDS", 0.0)  # SAMPLES timed calls a block, no more
    model = dp.DataParallel(module(), 2)
    x = dp.ones(8, 3)
    seen = []
    block = _auto.SAMPLES + 1  # a warm-up call, then the timed ones
    measuring = 2 * _auto.BLOCKS * block
    for _ in range(measuring + 4):
        np.testing.assert_array_equal(model(x).numpy(), 2.0 * np.ones((8, 3)))
        seen.append(model.last_execution)
    assert seen[:measuring] == (["threads"] * block + ["whole"] * block) * _auto.BLOCKS
    assert seen[measuring:] == [winner] * 4
    with dp.no_grad():
        model(x)
    assert model.last_execution == "threads"  # a new signature is measured afresh


def test_auto_keeps_chunks_when_layers_couple_the_rows(backend, rng):
    norm = nn.BatchNorm1d(2, dtype=F64)
    x = rng.standard_normal((6, 2))
    out = dp.DataParallel(norm, 2, execution="inline")(to_tensor(x)).numpy()  # chunked inline
    first = x[:3]
    np.testing.assert_allclose(out[:3], (first - first.mean(0)) / np.sqrt(first.var(0) + 1e-5),
                               rtol=1e-10)


@pytest.mark.timeout(300)
def test_eight_callers_share_one_data_parallel(backend, rng):
    module = nn.Sequential(nn.Linear(4, 8, dtype=F64), nn.Tanh(), nn.Linear(8, 1, dtype=F64))
    model = dp.DataParallel(module, 2, execution="threads")
    batches = [to_tensor(rng.standard_normal((6, 4))) for _ in range(8)]
    reference = [[g.numpy() for g in (module(b) ** 2).sum().backward().values()]
                 for b in batches]
    failures = []

    def caller(index):
        try:
            for _ in range(50):
                grads = (model(batches[index]) ** 2).sum().backward()
                got = [g.numpy() for g in grads.values()]
                assert all(np.allclose(a, b, rtol=1e-12) for a, b in
                           zip(got, reference[index], strict=True))
        except BaseException as error:  # reported below, in the test's thread
            failures.append(error)

    with dp.use_backend(backend):
        threads = [threading.Thread(target=caller, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failures == []


def test_training_with_an_optimizer(backend):
    dp.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 2)).astype(np.float32)
    y = (x[:, 0] * x[:, 1] > 0).astype(np.int64)
    model = dp.DataParallel(nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2)), 3)
    opt = dp.optim.Adam(model.parameters(), lr=0.05)
    inputs, labels = dp.tensor(x), dp.tensor(y)
    first = None
    for _ in range(60):
        loss = F.cross_entropy(model(inputs), labels)
        first = loss.item() if first is None else first
        opt.step(loss.backward())
    assert loss.item() < first / 2


@pytest.mark.skipif("cupy" not in dp.available_backends(), reason="needs a CUDA device")
def test_cupy_matches_numpy_and_uses_one_stream_per_chunk():
    import cupy

    streams = []

    class Streams(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8, dtype=F64)

        def forward(self, x):
            streams.append(cupy.cuda.get_current_stream().ptr)
            return self.fc(x).tanh()

    dp.manual_seed(0)
    module = Streams()
    x = np.random.default_rng(0).standard_normal((16, 8))
    expected = (module(dp.tensor(x)) ** 2).sum().backward()
    module.to("cupy")
    streams.clear()
    grads = (dp.DataParallel(module, 4, execution="threads")(dp.tensor(x, backend="cupy")) ** 2
             ).sum().backward()
    assert len(set(streams)) == 4
    for p, q in zip(expected.values(), grads.values(), strict=True):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-10)


@pytest.mark.timeout(60)
def test_a_failure_beside_sync_batch_norm_does_not_hang(backend):
    model = dp.DataParallel(nn.Sequential(FailsOn({3}), nn.SyncBatchNorm(2)), 3)
    with pytest.raises(dp.ChunkError, match="chunk 2 of 3 failed: KeyError") as error:
        model(dp.randn(11, 2))  # chunks of 4, 4, 3: the others wait in SyncBatchNorm, then stop
    assert error.value.chunk == 2
    model.module[0].bad_rows = set()
    assert model(dp.randn(11, 2)).shape == (11, 2)


def test_sync_batch_norm_is_refused_in_a_nested_data_parallel(backend):
    model = dp.DataParallel(dp.DataParallel(nn.SyncBatchNorm(2), 2), 2, execution="threads")
    with pytest.raises(Exception) as error:  # every chunk fails: a group on Python >= 3.11
        model(dp.randn(8, 2))
    failures = getattr(error.value, "exceptions", [error.value])
    assert all(isinstance(f, dp.ChunkError) and "cannot run in a nested DataParallel" in str(f)
               for f in failures)


@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_retain_graph_reaches_the_chunks(execution, backend, rng):
    module = nn.Sequential(nn.Linear(3, 4, dtype=F64), nn.Tanh())
    loss = (dp.DataParallel(module, 2, execution=execution)(
        to_tensor(rng.standard_normal((5, 3)))) ** 2).sum()
    first = loss.backward(retain_graph=True)
    second = loss.backward()
    for variable in first:
        np.testing.assert_array_equal(first[variable].numpy(), second[variable].numpy())
    with pytest.raises(RuntimeError, match="already freed"):
        loss.backward()


@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_the_same_data_parallel_twice_in_one_graph(execution, backend, rng):
    module = nn.Sequential(nn.Linear(3, 3, dtype=F64), nn.Tanh())
    model = dp.DataParallel(module, 3, execution=execution)
    x = to_tensor(rng.standard_normal((7, 3)), requires_grad=True)
    expected = (module(module(x)) ** 2).sum().backward()
    got = (model(model(x)) ** 2).sum().backward()
    assert list(got) == list(expected)
    for variable in expected:
        np.testing.assert_allclose(got[variable].numpy(), expected[variable].numpy(),
                                   rtol=1e-12)
