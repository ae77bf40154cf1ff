"""The strong Wolfe line search of ``LBFGS(line_search_fn="strong_wolfe")``, as PyTorch runs it
(a port of Torch7's ``lswolfe.lua``, itself after minFunc): bracket a step that satisfies the
strong Wolfe conditions, then zoom in on it by safeguarded cubic interpolation.

Steps, losses and directional derivatives are Python floats; gradients are flat backend
arrays, never modified in place.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Evaluate = Callable[[float], tuple[float, Any]]
"""``evaluate(t)``: the loss and the flat gradient at ``x + t * d``."""


def cubic_interpolate(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                      bounds: tuple[float, float] | None = None) -> float:
    """The minimiser of the cubic through two points with their values ``f`` and slopes
    ``g``, clamped to ``bounds`` (by default the interval between the points); the middle of
    the bounds when the cubic has no minimum."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(position, low), high)


def strong_wolfe(evaluate: Evaluate, dot: Callable[[Any, Any], float], d: Any, d_norm: float,
                 t: float, f: float, g: Any, gtd: float, c1: float = 1e-4, c2: float = 0.9,
                 tolerance_change: float = 1e-9,
                 max_ls: int = 25) -> tuple[float, Any, float, int]:
    """A step ``t`` along ``d`` from the point where the loss is ``f``, its gradient ``g`` and
    ``gtd = g . d``; returns ``(loss, gradient, t, evaluations)`` at that step. ``dot`` is the
    backend's dot product and ``d_norm`` the largest ``|d|``."""
    f_new, g_new = evaluate(t)
    evaluations = 1
    gtd_new = dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    bracket: list[float] = []
    bracket_f: list[float] = []
    bracket_g: list[Any] = []
    bracket_gtd: list[float] = []
    while ls_iter < max_ls:  # bracket an interval that holds a point satisfying the conditions
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        previous = t
        t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                              bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = previous, f_new, g_new, gtd_new
        f_new, g_new = evaluate(t)
        evaluations += 1
        gtd_new = dot(g_new, d)
        ls_iter += 1
    if ls_iter >= max_ls:
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a point satisfies the conditions
    insufficient_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1],
                              bracket_gtd[1])
        # a trial too close to an end of the bracket moves a tenth of its width inside, when
        # the last trial made too little progress too or it lies on (or beyond) the end
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) \
                    else min(bracket) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evaluations += 1
        gtd_new = dot(g_new, d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            # no sufficient decrease, or not below the lowest point: the new high end
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evaluations
