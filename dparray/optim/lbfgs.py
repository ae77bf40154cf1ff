"""L-BFGS: a quasi-Newton method that evaluates the loss several times per step, through a
closure.

PyTorch's closure zeroes the gradients, computes the loss, calls ``loss.backward()`` and
returns the loss; the optimizer then reads ``p.grad``. In dparray gradients are values, so
the closure returns them or lets LBFGS compute them, whichever reads better:

* ``return loss``: LBFGS calls ``loss.backward()`` itself (the PyTorch closure without its
  ``zero_grad()`` and ``backward()`` lines);
* ``return loss, loss.backward()``: the loss and its ``Gradients`` (the closure's
  ``backward()`` line kept, its result returned).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from dparray._checks import check_int, check_number, describe
from dparray.autograd import enable_grad
from dparray.creation import tensor as _to_tensor
from dparray.gradients import Gradients
from dparray.optim._line_search import strong_wolfe
from dparray.optim._shared import OptionCheck, non_negative
from dparray.optim.optimizer import Optimizer, state_key_problems
from dparray.tensor import Tensor

CLOSURE_HINT = ("LBFGS.step needs a closure: a function that computes the loss and returns it "
                "(LBFGS calls backward() on it) or returns (loss, loss.backward())")

DIRECTION_KEYS = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad",
                  "prev_loss")
"""The state a step leaves once it has taken one iteration (PyTorch's names); ``al`` (the
two-loop recursion's coefficients) comes with the second."""


def positive_int(value: Any, name: str, where: str) -> int:
    """An int of at least 1 (``max_iter``, ``max_eval``, ``history_size``)."""
    return check_int(value, name, where, minimum=1)


def line_search(value: Any, name: str, where: str) -> str | None:
    """None (fixed steps of ``lr``) or ``"strong_wolfe"``."""
    if value is not None and value != "strong_wolfe":
        kind = TypeError if not isinstance(value, str) else ValueError
        raise kind(f"{where}: {name} must be None or 'strong_wolfe', got {describe(value)}")
    return value


class LBFGS(Optimizer):
    """L-BFGS, as PyTorch computes it (after minFunc): each ``step(closure)`` runs up to
    ``max_iter`` iterations (``max_eval`` evaluations of the closure, by default
    ``max_iter * 5 // 4``), each a step along the direction that the last ``history_size``
    updates of parameters and gradients give, of length ``lr`` (the first scaled down by the
    gradient's size) or found by a strong Wolfe line search (``line_search_fn=
    "strong_wolfe"``). It stops early when the largest gradient is at most
    ``tolerance_grad`` or the loss or the parameters change by less than
    ``tolerance_change``.

    ``step(closure)`` returns the closure's first loss; see the module docstring for the two
    forms of closure. As in PyTorch, there is one parameter group, and the state (PyTorch's
    entries ``func_evals``, ``n_iter``, ``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``,
    ``H_diag``, ``prev_flat_grad``, ``prev_loss``, ``al``) is kept with the first parameter,
    the parameters flattened into one vector; scalars are Python floats. The parameters share
    one backend and one dtype.

    Examples:
        >>> import dparray as dp
        >>> w = dp.tensor([1.0, -2.0], dtype="float64", requires_grad=True)
        >>> opt = LBFGS([w], line_search_fn="strong_wolfe")
        >>> loss = opt.step(lambda: ((w - 3.0) ** 2).sum())
        >>> [round(v, 6) for v in w.tolist()]
        [3.0, 3.0]
    """

    state_counts = ("func_evals", "n_iter")

    option_checks: ClassVar[Mapping[str, OptionCheck]] = {
        "lr": non_negative,
        "max_iter": positive_int,
        "max_eval": positive_int,
        "tolerance_grad": non_negative,
        "tolerance_change": non_negative,
        "history_size": positive_int,
        "line_search_fn": line_search,
    }

    def __init__(self, params: Iterable[Any], lr: float = 1.0, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if max_eval is None:
            max_eval = positive_int(max_iter, "max_iter", "LBFGS") * 5 // 4
        super().__init__(params, {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                                  "tolerance_grad": tolerance_grad,
                                  "tolerance_change": tolerance_change,
                                  "history_size": history_size,
                                  "line_search_fn": line_search_fn})
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS does not support parameter groups (per-parameter options), "
                             "as in PyTorch; give it one list of parameters")
        members: list[Tensor] = self.param_groups[0]["params"]
        first = members[0]
        for p in members[1:]:
            if p.backend is not first.backend or p.dtype != first.dtype:
                raise ValueError(f"LBFGS: the parameters must share one backend and dtype, got "
                                 f"{first.dtype.name} on {first.backend.name!r} and "
                                 f"{p.dtype.name} on {p.backend.name!r}")
        self._size = sum(p.elem_count() for p in members)

    # ------------------------------------------------------------------ the step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # type: ignore[override]
        # (the base class's step takes Gradients; this one a closure, as PyTorch's LBFGS)
        """Run up to ``max_iter`` iterations; return the loss of the closure's first call."""
        where = "LBFGS.step"
        if closure is None or isinstance(closure, Gradients) or not callable(closure):
            raise TypeError(f"{CLOSURE_HINT}; got {describe(closure)}")
        group = self.check_options(self.param_groups[0], f"{where}: parameter group 0")
        lr, history_size = group["lr"], group["history_size"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        params: list[Tensor] = self.param_groups[0]["params"]
        xp = params[0].backend.xp
        state = self.state.setdefault(params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        def dot(a: Any, b: Any) -> float:
            return float(xp.matmul(a, b))

        def largest(v: Any) -> float:
            return float(xp.max(xp.abs(v)))

        first_loss, loss, flat_grad = self._evaluate(closure, params, where)
        evaluations = 1
        state["func_evals"] += 1
        if largest(flat_grad) <= tolerance_grad:
            return first_loss
        d, t = state.get("d"), state.get("t", lr)
        old_dirs, old_stps = list(state.get("old_dirs", [])), list(state.get("old_stps", []))
        ro, h_diag = list(state.get("ro", [])), state.get("H_diag", 1.0)
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter, optimal = 0, False
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = -flat_grad, [], [], [], 1.0
            else:  # update the memory, then the two-loop recursion
                y, s = flat_grad - prev_flat_grad, d * t
                ys = dot(y, s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs, old_stps, ro = old_dirs[1:], old_stps[1:], ro[1:]
                    old_dirs, old_stps, ro = [*old_dirs, y], [*old_stps, s], [*ro, 1.0 / ys]
                    h_diag = ys / dot(y, y)
                al: list[float | None] = list(state.get("al", []))
                al += [None] * (max(history_size, len(old_dirs)) - len(al))
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = coefficient = dot(old_stps[i], q) * ro[i]
                    q = q - coefficient * old_dirs[i]
                d = q * h_diag
                for i in range(len(old_dirs)):
                    beta = dot(old_dirs[i], d) * ro[i]
                    d = d + (al[i] - beta) * old_stps[i]
                state["al"] = al
            prev_flat_grad, prev_loss = flat_grad, loss
            t = min(1.0, 1.0 / float(xp.sum(xp.abs(flat_grad)))) * lr \
                if state["n_iter"] == 1 else lr
            gtd = dot(flat_grad, d)
            if gtd > -tolerance_change:  # not a descent direction (any more)
                break
            spent = 0
            if group["line_search_fn"] is not None:
                evaluate = functools.partial(self._evaluate_at, closure, params,
                                             [p.data for p in params], d=d, where=where)
                loss, flat_grad, t, spent = strong_wolfe(
                    evaluate, dot, d, largest(d), t, loss, flat_grad, gtd,
                    max_ls=max_eval - evaluations)
                self._add_to_params(params, t, d)
                optimal = largest(flat_grad) <= tolerance_grad
            else:
                self._add_to_params(params, t, d)
                if n_iter != max_iter:  # the last iteration's loss would go unused
                    _, loss, flat_grad = self._evaluate(closure, params, where)
                    optimal = largest(flat_grad) <= tolerance_grad
                    spent = 1
            evaluations += spent
            state["func_evals"] += spent
            if n_iter == max_iter or evaluations >= max_eval or optimal:
                break
            if largest(d * t) <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return first_loss

    def _evaluate(self, closure: Callable[[], Any], params: list[Tensor],
                  where: str) -> tuple[Any, float, Any]:
        """Call the closure: its loss as returned, as a float, and the flat gradient."""
        with enable_grad():
            result = closure()
            grads = None
            if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1],
                                                                              Gradients):
                loss, grads = result
            elif isinstance(result, Tensor):
                loss = result
            else:
                raise TypeError(f"{CLOSURE_HINT}; the closure returned {describe(result)}")
            if isinstance(loss, Tensor):
                if loss.elem_count() != 1:
                    raise ValueError(f"{where}: the loss must have one element, got shape "
                                     f"{loss.shape}")
                value = float(loss.item())
            else:
                value = check_number(loss, "the closure's loss", where, finite=False)
            if grads is None:
                grads = _differentiate(loss, where)
        return loss, value, self._flat_gradient(grads, params, where)

    def _flat_gradient(self, grads: Gradients, params: list[Tensor], where: str) -> Any:
        """Every parameter's gradient (zeros where there is none), flattened into one vector
        in the parameters' dtype."""
        mine = {id(p) for p in params}
        unknown = [v for v in grads if id(v) not in mine]
        if unknown:
            raise ValueError(f"{where}: {len(unknown)} gradient(s) for tensors this optimizer "
                             f"does not update (shapes {[v.shape for v in unknown]}); pass "
                             "their parameters to the optimizer or leave them out of the loss's "
                             "variables")
        xp = params[0].backend.xp
        pieces = []
        for p in params:
            g = grads.get(p)
            if g is None:
                pieces.append(xp.zeros((p.elem_count(),), dtype=p.data.dtype))
                continue
            if g.shape != p.shape or g.backend is not p.backend:
                raise ValueError(f"{where}: gradient of shape {g.shape} on {g.backend.name!r} "
                                 f"for a parameter of shape {p.shape} on {p.backend.name!r}")
            pieces.append(xp.reshape(xp.astype(g.data, p.data.dtype), (-1,)))
        return xp.concat(pieces)

    def _evaluate_at(self, closure: Callable[[], Any], params: list[Tensor], start: list[Any],
                     t: float, d: Any, where: str) -> tuple[float, Any]:
        """The loss and flat gradient at ``start + t * d``; the parameters return to
        ``start``."""
        self._add_to_params(params, t, d)
        try:
            _, loss, flat_grad = self._evaluate(closure, params, where)
        finally:
            for p, data in zip(params, start, strict=True):
                p.data = data
        return loss, flat_grad

    @staticmethod
    def _add_to_params(params: list[Tensor], t: float, d: Any) -> None:
        """``p += t * d``, ``d`` cut into the parameters' shapes."""
        xp = params[0].backend.xp
        offset = 0
        for p in params:
            size = p.elem_count()
            p.data = p.data + t * xp.reshape(d[offset:offset + size], p.shape)
            offset += size

    # ------------------------------------------------------------------ state dicts
    def state_dict(self) -> dict[str, Any]:
        """PyTorch's layout: the state under parameter 0, vectors as Tensors, lists of them
        as lists, scalars as Python numbers."""
        result = super().state_dict()
        backend = self.param_groups[0]["params"][0].backend
        exported = {}
        for index, entry in result["state"].items():
            exported[index] = {
                key: [Tensor(v, backend) for v in value] if key in ("old_dirs", "old_stps")
                else list(value) if isinstance(value, list)
                else Tensor(value, backend) if key in ("d", "prev_flat_grad")
                else value
                for key, value in entry.items()}
        result["state"] = exported
        return result

    def _checked_state(self, entry: Any, p: Tensor, position: int, where: str,
                       group: Mapping[str, Any], *, loading: bool = False) -> dict[str, Any]:
        """A checked copy of a state dict's entry: empty, or ``func_evals`` and ``n_iter``
        with every entry of ``DIRECTION_KEYS`` or none (and ``al`` optionally); vectors of
        the parameters' total size as arrays of their backend and dtype, 0-d Tensors as
        floats. Only parameter 0 holds state."""
        if not isinstance(entry, Mapping):
            raise TypeError(f"{where}: the state of parameter {position} must be a mapping, "
                            f"got {type(entry).__name__}")
        if not entry:
            return {}
        if position != 0:
            raise ValueError(f"{where}: LBFGS keeps its state with parameter 0, got state for "
                             f"parameter {position}")
        given = [k for k in DIRECTION_KEYS if k in entry]
        required = (*self.state_counts, *(DIRECTION_KEYS if given else ()))
        problems = state_key_problems(entry, (*self.state_counts, *DIRECTION_KEYS, "al"),
                                      required)
        if problems:
            raise ValueError(f"{where}: the state of LBFGS needs {', '.join(self.state_counts)} "
                             f"and, after an iteration, {', '.join(DIRECTION_KEYS)}: "
                             f"{problems}")
        checked: dict[str, Any] = {
            key: check_int(entry[key], key, where, minimum=0) for key in self.state_counts}
        if not given:
            return checked
        params = self.param_groups[0]["params"]

        def vector(value: Any, name: str) -> Any:
            return self._vector(value, params[0], name, where)

        def scalar(value: Any, name: str) -> float:
            if isinstance(value, Tensor) and value.elem_count() == 1:
                value = value.item()
            return check_number(value, name, where, finite=False)

        checked.update(d=vector(entry["d"], "d"),
                       prev_flat_grad=vector(entry["prev_flat_grad"], "prev_flat_grad"),
                       t=scalar(entry["t"], "t"), H_diag=scalar(entry["H_diag"], "H_diag"),
                       prev_loss=scalar(entry["prev_loss"], "prev_loss"))
        lists = {key: _as_list(entry[key], key, where)
                 for key in ("old_dirs", "old_stps", "ro") + (("al",) if "al" in entry else ())}
        if not len(lists["old_dirs"]) == len(lists["old_stps"]) == len(lists["ro"]):
            raise ValueError(f"{where}: old_dirs, old_stps and ro must have one length, got "
                             f"{len(lists['old_dirs'])}, {len(lists['old_stps'])} and "
                             f"{len(lists['ro'])}")
        for key in ("old_dirs", "old_stps"):
            checked[key] = [vector(v, f"{key}[{i}]") for i, v in enumerate(lists[key])]
        checked["ro"] = [scalar(v, f"ro[{i}]") for i, v in enumerate(lists["ro"])]
        if "al" in lists:
            checked["al"] = [None if v is None else scalar(v, f"al[{i}]")
                             for i, v in enumerate(lists["al"])]
        return checked

    def _vector(self, value: Any, p: Tensor, name: str, where: str) -> Any:
        """A Tensor of the parameters' total size as an array of their backend and dtype."""
        if not isinstance(value, Tensor):
            raise TypeError(f"{where}: {name} must be a Tensor, got {describe(value)}")
        if value.shape != (self._size,):
            raise ValueError(f"{where}: {name} has shape {value.shape}, not ({self._size},) "
                             "(the parameters' total size)")
        if not value.dtype.is_floating:
            raise ValueError(f"{where}: {name} has dtype {value.dtype.name}; optimizer state "
                             "is floating")
        return _to_tensor(value, dtype=p.dtype, backend=p.backend).data


def _as_list(value: Any, name: str, where: str) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{where}: {name} must be a list, got {describe(value)}")
    return list(value)


def _differentiate(loss: Tensor, where: str) -> Gradients:
    """``loss.backward()``, with a hint when the closure had differentiated it already."""
    try:
        return loss.backward()
    except RuntimeError as error:
        if "already freed" not in str(error):
            raise
        raise RuntimeError(f"{where}: the closure's loss was differentiated already; return "
                           "the loss and let LBFGS call backward(), or return (loss, "
                           "loss.backward())") from error
