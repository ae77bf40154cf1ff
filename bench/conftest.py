"""Imports dparray before any benchmark module imports NumPy, as a user's sorted imports do
(``import dparray`` sorts before ``import numpy``), so that dparray's OpenBLAS setting applies
(``backends/_openblas_setup.py``)."""

import dparray  # noqa: F401
