"""The kernel contract, checked: every table entry names a reference op, every kernel class
subclasses its reference (every kernel function takes its reference's parameters), and every
call site hands ``resolve`` a declared reference rather than a name."""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

import dparray as dp
from dparray import kernels
from dparray.autograd import Function

CORE = pathlib.Path(__file__).resolve().parent.parent / "dparray"


def _tables():
    """Each built-in backend's full kernel table (NumPy's as it is when Numba can run it)."""
    from dparray.backends import _cupy_kernels, _numpy_kernels

    return {"numpy": _numpy_kernels.table(), "cupy": _cupy_kernels.table()}


@pytest.mark.parametrize("backend", ["numpy", "cupy"])
def test_every_table_entry_keeps_the_contract(backend):
    table = _tables()[backend]
    assert table, f"{backend}: the kernel table is empty here"
    kernels.check_table(table)  # raises, listing every broken entry


def test_every_reference_is_an_op_or_a_function():
    declared = kernels.references()
    assert len(declared) >= 28
    for name, reference in declared.items():
        assert reference.kernel_name == name
        if isinstance(reference, type):
            assert issubclass(reference, Function), name
        else:
            assert callable(reference), name


class _Op(Function):
    pass


def test_check_table_names_every_broken_entry():
    def update(self, xp, param, grad, state, group):
        return param

    kernels.reference("test_contract_op")(_Op)
    kernels.reference("test_contract_update")(update)

    def good_update(optimizer, xp, param, grad, state, group):
        return param

    def short_update(optimizer, xp, param):
        return param

    kernels.check_table({"test_contract_op": type("Fast", (_Op,), {}),
                         "test_contract_update": good_update})
    with pytest.raises(ValueError) as caught:
        kernels.check_table({"test_contract_typo": _Op, "test_contract_op": Function,
                             "test_contract_update": short_update})
    message = str(caught.value)
    assert "'test_contract_typo' is not the name of a reference op" in message
    assert "'test_contract_op': dparray.autograd.Function does not subclass" in message
    assert "'test_contract_update'" in message and "does not take the parameters" in message


def _modules():
    for path in sorted(CORE.rglob("*.py")):
        parts = list(path.relative_to(CORE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def test_every_call_site_resolves_a_declared_reference():
    """``resolve(backend, X)`` with ``X`` a reference that the module can name: never a string,
    never an op that declares no table name (it would silently never get a kernel)."""
    declared = set(map(id, kernels.references().values()))
    sites = 0
    for name, path in _modules():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "resolve"):
                continue
            sites += 1
            where = f"{path.name}:{node.lineno}"
            assert len(node.args) == 2 and not node.keywords, where
            target = node.args[1]
            assert not isinstance(target, ast.Constant), f"{where}: a name, not a reference"
            module = importlib.import_module(name)
            if isinstance(target, ast.Name) and hasattr(module, target.id):  # (else computed
                assert id(getattr(module, target.id)) in declared, \
                    f"{where}: {target.id} declares no kernel name"  # at run time: a method)
    assert sites >= 20


def test_an_optimizer_that_overrides_update_runs_its_own():
    """A subclass of ``Adam`` with an ``update`` of its own gets no kernel (it used to get
    Adam's compiled update on NumPy, silently skipping the override)."""
    calls = []

    class Logged(dp.optim.Adam):
        def update(self, xp, param, grad, state, group):
            calls.append(param.shape)
            return super().update(xp, param, grad, state, group)

    w = dp.ones(3, requires_grad=True, backend="numpy")
    Logged([w], lr=0.1).step((w * w).sum().backward())
    assert calls == [(3,)]
    table = dp.get_backend("numpy").kernels
    expected = table.get("adam_update", dp.optim.Adam.update)
    assert kernels.resolve(w.backend, dp.optim.AdamW.update) is expected  # AdamW keeps Adam's
