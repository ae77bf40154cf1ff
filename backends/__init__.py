"""Backend adapters, imported as ``dparray.backends.<name>``.

This folder is the only place in dparray that imports an array library. Each adapter is a small
class over ``dparray.backends.array_api.ArrayAPIBackend``, the generic adapter for any
array-API namespace, overriding a hook only where its library does better.
"""
