"""The error function written in array-API operations alone.

The standard has no ``erf``, yet exact GELU and float64 gradient checks need one accurate to
float64 precision. This is the piecewise rational approximation of Sun's fdlibm ``s_erf.c``
(coefficients from that file; its stated error is below one ulp), evaluated branch-free: every
piece is computed on inputs clamped into its interval and the pieces are joined with ``where``.
"""

from __future__ import annotations

from typing import Any

# erf(x) = x + x * P(x^2) / Q(x^2) on |x| < 0.84375
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
       -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02,
       5.08130628187576562776e-03, 1.32494738004321644526e-04, -3.96022827877536812320e-06)
# erf(1 + s) = ERX + P(s) / Q(s) on 0.84375 <= |x| < 1.25
_ERX = 8.45062911510467529297e-01
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
       3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01,
       7.18286544141962662868e-02, 1.26171219808761642112e-01, 1.36370839120290507362e-02,
       1.19844998467991074170e-02)
# erfc(x) = exp(-x^2 - 0.5625 + R(1/x^2) / S(1/x^2)) / x on 1.25 <= |x| < 1/0.35
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
       -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
       6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
       6.57024977031928170135e+00, -6.04244152148580987438e-02)
# the same form on 1/0.35 <= |x| < 6 (beyond 6, erf is 1 to float64 precision)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
       -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
       3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
       -2.24409524465858183362e+01)


def _polynomial(coefficients: tuple[float, ...], z: Any) -> Any:
    """Horner's rule; ``coefficients`` from the constant term up."""
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = result * z + c
    return result


def erf(xp: Any, x: Any) -> Any:
    """``erf(x)`` elementwise for a real floating array ``x``, in ``x``'s dtype."""
    ax = xp.abs(x)
    sign = xp.sign(x)  # only used where |x| >= 0.84375, so sign(0) = 0 does not matter

    small = xp.clip(x, -0.84375, 0.84375)
    z = small * small
    erf_small = small + small * (_polynomial(_PP, z) / _polynomial(_QQ, z))

    s = xp.clip(ax, 0.84375, 1.25) - 1.0
    erf_middle = sign * (_ERX + _polynomial(_PA, s) / _polynomial(_QA, s))

    t = xp.clip(ax, 1.25, 6.0)
    w = 1.0 / (t * t)
    ratio = xp.where(
        t < 1.0 / 0.35,
        _polynomial(_RA, w) / _polynomial(_SA, w),
        _polynomial(_RB, w) / _polynomial(_SB, w),
    )
    # exp(-t^2) with t^2 split as u^2 + (t-u)(t+u), u = t rounded to float32: u^2 is exact in
    # float64, so the large exponent loses no bits (fdlibm's trick).
    u = xp.astype(xp.astype(t, xp.float32), t.dtype)
    erfc_large = xp.exp(-u * u - 0.5625) * xp.exp((u - t) * (u + t) + ratio) / t
    erf_large = sign * (1.0 - erfc_large)

    result = xp.where(ax < 0.84375, erf_small, xp.where(ax < 1.25, erf_middle, erf_large))
    result = xp.where(ax >= 6.0, sign, result)
    return xp.where(xp.isnan(x), x, result)
