"""Batches moved to the loader's ``backend``, each copy started one batch before its use.

``dparray.backend.to_device_async(backend, host)`` is the optional backend member behind it:
``host`` (a NumPy array) becomes an array of ``backend`` and a ``ready()`` to call before that
array is first used. Without the member it is a plain ``backend.asarray(host)``. CuPy
has the hook: the copy is staged in pinned host memory and runs on a stream of its own, so it
overlaps the model's kernels; ``ready()`` makes the caller's stream wait for it on the device,
never blocking the host.

``ahead(batches, target)`` starts the copy of batch ``i + 1`` when it hands out batch ``i``,
all in the consumer's thread (the device and stream it computes on), so each copy runs while
the previous step computes.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from dparray import _tree
from dparray.backend import Backend, to_device_async
from dparray.tensor import Tensor

Ready = Callable[[], None]


def start_transfer(batch: Any, target: Backend) -> tuple[Any, Ready]:
    """``batch`` (a tensor, or tuples, lists and dicts of them) with every tensor that is not
    on ``target`` copied there (as a constant), and the ``ready`` of all the copies."""
    tensors, structure = _tree.flatten(batch, Tensor)
    moved, waits = [], []
    for t in tensors:
        if t.backend is target:
            moved.append(t)
            continue
        array, ready = to_device_async(target, t.backend.to_numpy(t.data))
        moved.append(Tensor(array, target))
        waits.append(ready)

    def ready_all() -> None:
        for ready in waits:
            ready()

    return _tree.rebuild(structure, moved), ready_all


def ahead(batches: Callable[[], Any], target: Backend) -> Generator[Any, None, None]:
    """The results of ``batches()`` (until StopIteration) on ``target``, each copy started
    one batch early. An exception from ``batches()`` is raised after the batch before it has
    been handed out, so every batch arrives on the call it would have without the look-ahead.
    """
    pending: tuple[Any, Ready] | None = None
    while True:
        try:
            batch = batches()
        except StopIteration:
            break
        except Exception:
            if pending is not None:
                value, ready = pending
                pending = None
                ready()
                yield value
            raise
        started = start_transfer(batch, target)
        if pending is not None:
            value, ready = pending
            pending = None  # drop the reference: the consumer owns the batch from now on
            ready()
            yield value
        pending = started
    if pending is not None:
        value, ready = pending
        ready()
        yield value

