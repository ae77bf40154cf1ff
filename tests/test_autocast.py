"""``dparray.autocast``: the context, its one policy table, every listed op against float32
and against PyTorch's autocast (``tests/data/mixed_precision.safetensors``, made by
``tests/data/make_mixed_precision_fixtures.py``), DataParallel's workers and other threads."""

from __future__ import annotations

import ast
import json
import pathlib
import threading

import numpy as np
import pytest
from safetensors import safe_open

import dparray as dp
import dparray.nn.functional as F
from dparray import nn, precision
from dparray.ops.attention import attention_weights

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "mixed_precision.safetensors"
LOW = ["bfloat16", "float16"]
EPS = {"bfloat16": 2.0**-7, "float16": 2.0**-10}


# ----------------------------------------------------------------------------- the context
def test_autocast_sets_and_restores_the_dtype():
    assert precision.active_dtype() is None and not dp.amp.is_autocast_enabled()
    with dp.autocast(dtype=dp.float16) as context:
        assert precision.active_dtype() is dp.float16 and context.dtype is dp.float16
        with dp.autocast(enabled=False):
            assert precision.active_dtype() is None
            assert (dp.ones((2, 2)) @ dp.ones((2, 2))).dtype is dp.float32
        with dp.autocast("bfloat16"):
            assert precision.active_dtype() is dp.bfloat16
        assert precision.active_dtype() is dp.float16
    assert precision.active_dtype() is None
    assert dp.amp.autocast is dp.autocast


def test_autocast_takes_pytorchs_signature():
    """``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: the
    device type picks PyTorch's default dtype for it, and the block covers every backend."""
    assert dp.autocast("cuda").dtype is dp.float16
    assert dp.autocast(device_type="cpu").dtype is dp.bfloat16
    assert dp.autocast("cuda", dtype=dp.bfloat16).dtype is dp.bfloat16
    assert dp.autocast("cpu", dp.float16).dtype is dp.float16
    assert dp.autocast(dp.float16).dtype is dp.float16  # the dtype first, dparray's way
    with dp.autocast(device_type="cpu", dtype=dp.bfloat16, cache_enabled=False):
        assert (dp.ones((2, 2)) @ dp.ones((2, 2))).dtype is dp.bfloat16
    with dp.autocast("cuda", enabled=False):
        assert precision.active_dtype() is None
    with pytest.raises(ValueError, match=r"autocast: device_type must be one of \['cpu', "
                                         r"'cuda'\], got 'mps'"):
        dp.autocast("mps")
    with pytest.raises(TypeError, match="autocast: cache_enabled must be a bool"):
        dp.autocast("cpu", cache_enabled="yes")


def test_autocast_as_a_decorator_is_reentrant():
    @dp.autocast()
    def product(depth):
        inner = product(depth - 1) if depth else None
        assert precision.active_dtype() is dp.bfloat16
        return inner

    product(3)
    assert precision.active_dtype() is None


def test_autocast_refuses_other_dtypes():
    with pytest.raises(ValueError, match="autocast: dtype must be bfloat16 or float16, got "
                                         "float32"):
        dp.autocast(dtype=dp.float32)
    with pytest.raises(TypeError, match=r"autocast: dtype must be dparray\.bfloat16 or "
                                        r"dparray\.float16; unknown dtype 'half'"):
        dp.autocast(dtype="half")
    with pytest.raises(TypeError, match="enabled"):
        dp.autocast(enabled="yes")


def test_autocast_does_not_leak_to_other_threads():
    seen = {}
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait()
        seen["other"] = precision.active_dtype()
        seen["product"] = (dp.ones((2, 3)) @ dp.ones((3, 2))).dtype
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with dp.autocast():
        inside.set()
        done.wait()
        seen["mine"] = (dp.ones((2, 3)) @ dp.ones((3, 2))).dtype
    thread.join()
    assert seen == {"other": None, "product": dp.float32, "mine": dp.bfloat16}


class _Recording(nn.Module):
    """A linear layer that records the autocast dtype each call sees, and its thread."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.seen = []

    def forward(self, x):
        self.seen.append((threading.get_ident(), precision.active_dtype()))
        return self.fc(x)


@pytest.mark.parametrize("workers", [2, 3])
def test_autocast_reaches_dataparallels_workers(workers):
    dp.manual_seed(0)
    model = _Recording()
    parallel = dp.DataParallel(model, num_workers=workers, execution="threads")
    x = dp.randn(12, 4)
    with dp.autocast():
        out = parallel(x)
        loss = out.astype("float32").square().mean() if hasattr(out, "square") else \
            (out.astype("float32") ** 2).mean()
    grads = loss.backward()
    assert out.dtype is dp.bfloat16 and len(model.seen) == workers
    assert len({thread for thread, _ in model.seen}) == workers  # on the workers' threads
    assert {dtype for _, dtype in model.seen} == {dp.bfloat16}
    with dp.autocast():
        whole = model(x)
    np.testing.assert_array_equal(out.numpy(), whole.numpy())
    assert all(g.dtype is dp.float32 for g in grads.values())
    model.seen.clear()
    parallel(x)  # outside: the workers see no autocast
    assert {dtype for _, dtype in model.seen} == {None}


# -------------------------------------------------------------------------------- the table
def _decorated():
    """Every ``@autocast_op("name")`` in the package: (file, function, name)."""
    found = []
    for path in sorted((ROOT / "dparray").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                if (isinstance(decorator, ast.Call) and getattr(decorator.func, "id", "")
                        == "autocast_op"):
                    found.append((path.name, node.name, decorator.args[0].value))
    return found


def test_every_row_of_the_policy_is_used_and_every_use_has_a_row():
    used = {name for _, _, name in _decorated()}
    assert used == set(precision.POLICY)
    assert set(precision.POLICY.values()) == {precision.LOW, precision.FLOAT32}


def test_the_mixed_precision_page_lists_the_policy():
    page = (ROOT / "docs" / "mixed-precision.md").read_text()
    rows = {}
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].startswith("`"):
            for name in cells[0].replace("`", "").split(","):
                rows[name.strip()] = cells[1]
    expected = {name: "low precision" if rule == precision.LOW else "float32"
                for name, rule in precision.POLICY.items()}
    assert rows == expected


def _low(*shape, rng):
    return dp.tensor(rng.standard_normal(shape).astype(np.float32))


def _cases(rng):
    """An input set and a call for every row of the table."""
    def r(*shape):
        return _low(*shape, rng=rng)

    target = dp.tensor([0, 2, 1, 3])
    signs = dp.tensor([1.0, -1.0, 1.0, -1.0])
    unit = dp.tensor(rng.uniform(0.05, 0.95, (4, 5)).astype(np.float32))
    return {
        "matmul": (dp.matmul, [r(3, 4, 6), r(3, 6, 5)]),
        "linear": (F.linear, [r(4, 6), r(3, 6), r(3)]),
        "conv1d": (F.conv1d, [r(2, 3, 9), r(4, 3, 3), r(4)]),
        "conv2d": (F.conv2d, [r(2, 3, 6, 6), r(4, 3, 3, 3), r(4)]),
        "conv3d": (F.conv3d, [r(2, 3, 4, 5, 4), r(4, 3, 2, 3, 2), r(4)]),
        "conv_transpose": (F.conv_transpose2d, [r(2, 3, 4, 4), r(3, 2, 3, 3), r(2)]),
        "conv_transpose3d": (F.conv_transpose3d, [r(2, 3, 3, 4, 3), r(3, 2, 2, 3, 2), r(2)]),
        "einsum": (lambda a, b: dp.einsum("bij,bjk->bik", a, b), [r(2, 4, 5), r(2, 5, 3)]),
        "addmm": (lambda c, a, b: dp.addmm(c, a, b, alpha=0.5), [r(3), r(4, 5), r(5, 3)]),
        "baddbmm": (lambda c, a, b: dp.baddbmm(c, a, b, beta=0.5),
                    [r(2, 4, 3), r(2, 4, 5), r(2, 5, 3)]),
        "scaled_dot_product_attention": (F.scaled_dot_product_attention,
                                         [r(2, 5, 4), r(2, 6, 4), r(2, 6, 4)]),
        "attention_weights": (lambda q, k: attention_weights(q, k, None, 0.0, False, 0.5),
                              [r(2, 5, 4), r(2, 6, 4)]),
        "sum": (lambda x: x.sum(axis=1), [r(4, 300)]),
        "mean": (lambda x: x.mean(axis=1), [r(4, 300)]),
        "var": (lambda x: x.var(axis=1), [r(4, 30)]),
        "std": (lambda x: x.std(axis=1), [r(4, 30)]),
        "prod": (lambda x: (1.0 + 0.1 * x).prod(axis=1), [r(3, 5)]),
        "logsumexp": (lambda x: x.logsumexp(axis=1), [r(4, 30)]),
        "cumsum": (lambda x: x.cumsum(axis=1), [r(4, 30)]),
        "cumprod": (lambda x: dp.cumprod(1.0 + 0.05 * x, axis=1), [r(4, 10)]),
        "logcumsumexp": (lambda x: dp.logcumsumexp(x, axis=1), [r(4, 10)]),
        "softmax": (lambda x: F.softmax(x, dim=-1), [r(4, 30)]),
        "log_softmax": (lambda x: F.log_softmax(x, dim=-1), [r(4, 30)]),
        "layer_norm": (lambda x, w, b: F.layer_norm(x, (8,), w, b), [r(4, 8), r(8), r(8)]),
        "batch_norm": (lambda x: F.batch_norm(x, None, None, training=True), [r(6, 4, 5)]),
        "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b), [r(3, 4, 5), r(4), r(4)]),
        "instance_norm": (F.instance_norm, [r(3, 4, 5)]),
        "rms_norm": (lambda x, w: F.rms_norm(x, (8,), w, eps=1e-6), [r(4, 8), r(8)]),
        "cross_entropy": (lambda x: F.cross_entropy(x, target), [r(4, 5)]),
        "nll_loss": (lambda x: F.nll_loss(F.log_softmax(x, dim=-1), target), [r(4, 5)]),
        "mse_loss": (F.mse_loss, [r(4, 5), r(4, 5)]),
        "l1_loss": (F.l1_loss, [r(4, 5), r(4, 5)]),
        "huber_loss": (F.huber_loss, [r(4, 5), r(4, 5)]),
        "smooth_l1_loss": (F.smooth_l1_loss, [r(4, 5), r(4, 5)]),
        "binary_cross_entropy": (lambda x: F.binary_cross_entropy(x, unit), [unit * 0.9]),
        "binary_cross_entropy_with_logits": (lambda x: F.binary_cross_entropy_with_logits(
            x, unit), [r(4, 5)]),
        "kl_div": (lambda x: F.kl_div(F.log_softmax(x, dim=-1), F.softmax(x * 0.5, dim=-1),
                                      reduction="batchmean"), [r(4, 5)]),
        "cosine_embedding_loss": (lambda a, b: F.cosine_embedding_loss(a, b, signs),
                                  [r(4, 5), r(4, 5)]),
        "margin_ranking_loss": (lambda a, b: F.margin_ranking_loss(a, b, signs, margin=0.2),
                                [r(4), r(4)]),
        "hinge_embedding_loss": (lambda x: F.hinge_embedding_loss(x, dp.sign(x), margin=0.5,
                                                                  reduction="none"), [r(4, 5)]),
        "soft_margin_loss": (lambda x: F.soft_margin_loss(x, dp.sign(x), reduction="none"),
                             [r(4, 5)]),
        "multilabel_soft_margin_loss": (lambda x: F.multilabel_soft_margin_loss(
            x, unit > 0.5, reduction="none"), [r(4, 5)]),
        "multi_margin_loss": (lambda x: F.multi_margin_loss(x, target, reduction="none"),
                              [r(4, 5)]),
        "triplet_margin_loss": (lambda a, p, n: F.triplet_margin_loss(a, p, n, reduction="none"),
                                [r(4, 5), r(4, 5), r(4, 5)]),
        "poisson_nll_loss": (lambda x: F.poisson_nll_loss(x, unit * 3, reduction="none"),
                             [r(4, 5)]),
        "gaussian_nll_loss": (lambda x, v: F.gaussian_nll_loss(x, unit, v * v + 0.1,
                                                               reduction="none"),
                              [r(4, 5), r(4, 5)]),
        "cdist": (dp.cdist, [r(5, 4), r(6, 4)]),
    }


def _relative_error(got, expected):
    got, expected = (np.asarray(t.astype("float64").numpy()) for t in (got, expected))
    return float(np.linalg.norm(got - expected)) / max(float(np.linalg.norm(expected)), 1e-30)


def test_every_row_has_a_case():
    assert set(_cases(np.random.default_rng(0))) == set(precision.POLICY)


@pytest.mark.parametrize("name", LOW)
@pytest.mark.parametrize("op", sorted(precision.POLICY))
def test_every_listed_op_under_autocast(op, name, kernels):
    """The output's dtype is the policy's, its value and every gradient within a few
    low-precision roundings of float32's, and the gradients of float32 inputs are float32."""
    function, inputs = _cases(np.random.default_rng(7))[op]
    variables = [t.detach().requires_grad_() for t in inputs]
    with dp.autocast(dtype=name):
        out = function(*variables)
        loss = (out.astype("float32") ** 2).sum()
    grads = loss.backward()
    wanted = name if precision.POLICY[op] == precision.LOW else "float32"
    assert out.dtype.name == wanted
    wide = [t.detach().requires_grad_() for t in inputs]
    expected = function(*wide)
    expected_grads = (expected ** 2).sum().backward()
    tolerance = 12 * EPS[name]
    assert _relative_error(out, expected) <= tolerance
    for v, w in zip(variables, wide, strict=True):
        assert grads[v].dtype is dp.float32
        assert _relative_error(grads[v], expected_grads[w]) <= 4 * tolerance, op


def test_float64_and_integer_tensors_are_never_cast():
    x = dp.randn(3, 4, dtype="float64")
    with dp.autocast():
        assert (x @ x.T).dtype is dp.float64 and x.sum().dtype is dp.float64
        assert dp.arange(6).sum().dtype is dp.int64


def test_a_model_trains_with_float32_parameters_under_autocast():
    dp.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4))
    opt = dp.optim.AdamW(model.parameters(), lr=1e-2)
    x, y = dp.randn(32, 8), dp.tensor([i % 4 for i in range(32)])
    losses = []
    for _ in range(30):
        with dp.autocast():
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        opt.step(loss.backward())
        losses.append(loss.item())
    assert logits.dtype is dp.bfloat16 and loss.dtype is dp.float32
    assert all(p.dtype is dp.float32 for p in model.parameters())
    assert all(s["exp_avg"].dtype == np.float32 for s in opt.state.values())
    assert losses[-1] < 0.7 * losses[0]


def test_autocast_on_a_backend_without_the_dtype_is_refused_by_name():
    with dp.use_backend("array_api_strict"):
        a = dp.ones((2, 2))
        with dp.autocast(), pytest.raises(TypeError, match="does not support dtype bfloat16"):
            a @ a
        with dp.autocast():
            assert a.sum().dtype is dp.float32  # float32 ops need no low-precision dtype


# ------------------------------------------------------------------------ against PyTorch
def _fixture_cases():
    with safe_open(str(FIXTURES), "np") as f:
        return json.loads(f.metadata()["autocast_cases"])


def _torch_call(case, inputs):
    """The dparray call for a case of the fixture (PyTorch's names and arguments)."""
    op, kwargs = case["op"], dict(case["kwargs"])
    if op == "einsum":
        return dp.einsum(kwargs["subscripts"], *inputs)
    if op == "matmul":
        return inputs[0] @ inputs[1]
    if op in ("addmm", "baddbmm", "cdist"):
        return getattr(dp, op)(*inputs, **kwargs)
    if op in ("var", "std"):  # the fixture's are the population's (correction=0)
        return getattr(dp, op)(inputs[0], axis=kwargs["dim"], correction=0)
    if op in ("sum", "mean", "logsumexp", "cumsum", "cumprod", "logcumsumexp", "prod"):
        return getattr(dp, op)(inputs[0], axis=kwargs["dim"])
    if op in ("softmax", "log_softmax"):
        return getattr(F, op)(inputs[0], dim=kwargs["dim"])
    if op == "layer_norm":
        return F.layer_norm(inputs[0], (inputs[0].shape[-1],), *inputs[1:])
    if op == "rms_norm":
        return F.rms_norm(inputs[0], (inputs[0].shape[-1],), inputs[1], eps=1e-6)
    if op == "batch_norm":
        return F.batch_norm(inputs[0], None, None, training=True)
    if op == "group_norm":
        return F.group_norm(inputs[0], kwargs["num_groups"], *inputs[1:])
    if op == "add":
        return inputs[0] + inputs[1]
    if op == "add_scalar":
        return inputs[0] + kwargs["other"]
    return getattr(F, op)(*inputs, **kwargs)


@pytest.mark.parametrize("case", _fixture_cases(), ids=lambda case: case["key"])
def test_against_pytorchs_autocast(case):
    saved = dp.load(FIXTURES)
    inputs = [saved[f"{case['key']}/in.{i}"] for i in range(case["inputs"])]
    inputs = [t.astype(case["dtype"]) if i in case["low"] else t for i, t in enumerate(inputs)]
    expected = saved[f"{case['key']}/out"]
    with dp.autocast(dtype=case["dtype"]):
        out = _torch_call(case, inputs)
    assert out.dtype is expected.dtype, (out.dtype, expected.dtype)
    got = out.astype("float64").numpy()
    want = expected.astype("float64").numpy()
    eps = EPS[case["dtype"]]
    scale = float(np.abs(want).max()) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=2 * eps, atol=2 * eps * scale)
