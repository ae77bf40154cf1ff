"""Backend adapters, imported as ``dparray.backends.<name>``.

This folder is the only place in dparray that imports an array library. Each adapter is a small
class over ``dparray.backends.array_api.ArrayAPIBackend``, the generic adapter for any
array-API namespace, overriding a hook only where its library does better.
"""

from ._openblas_setup import shorten_spin

shorten_spin()  # before an adapter loads NumPy, and with it OpenBLAS
