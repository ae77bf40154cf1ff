"""Saving and loading state dicts as safetensors files: no pickle, PyTorch-compatible.

A file holds a flat ``name -> tensor`` mapping with PyTorch's key names and layouts, so a
dparray model's weights load into the matching ``torch.nn`` model and back. Writes are atomic:
the bytes go to a temporary file in the same folder, are flushed to disk, then renamed over the
target, so a crash never leaves a half-written file. dparray also records a SHA-256 of the
tensors in the file's metadata and checks it on load, so a corrupted payload is an error rather
than wrong weights (files from other writers have no checksum and are only checked for form).

NumPy is the host interchange format here, the one module of the core that uses it; it is
imported on first use, so ``import dparray`` loads no array library.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import struct
from collections.abc import Mapping
from typing import Any

from dparray.backend import Backend, get_backend
from dparray.tensor import Tensor

CHECKSUM_KEY = "dparray.sha256"
ORDER_KEY = "dparray.keys"  # safetensors lays tensors out by dtype; this keeps the dict's order


def save(state_dict: Mapping[str, Tensor], path: str | os.PathLike[str],
         metadata: Mapping[str, str] | None = None) -> None:
    """Write ``state_dict`` (name -> tensor) to ``path`` as a safetensors file, atomically.

    Examples:
        >>> import dparray as dp, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "weights.safetensors")
        >>> dp.save({"w": dp.ones(2, 3)}, path)
        >>> dp.load(path)["w"].shape
        (2, 3)
    """
    import safetensors.numpy

    arrays = _to_host(state_dict)
    header = {str(k): str(v) for k, v in (metadata or {}).items()}
    header[CHECKSUM_KEY] = _checksum(arrays)
    header[ORDER_KEY] = json.dumps(list(arrays))
    payload = safetensors.numpy.save(arrays, metadata=header)
    _write_atomically(os.fspath(path), payload)


def load(path: str | os.PathLike[str], backend: str | Backend | None = None) -> dict[str, Tensor]:
    """Read a safetensors file into ``name -> tensor`` on ``backend`` (the current one by
    default), in the order the state dict had when dparray saved it (else the file's).

    Raises ValueError for a file that is truncated, malformed or fails its checksum, and
    OSError when it cannot be read.
    """
    import safetensors.numpy

    path = os.fspath(path)
    with open(path, "rb") as file:
        payload = file.read()
    try:
        arrays = safetensors.numpy.load(payload)
    except Exception as error:  # safetensors raises its own SafetensorError type
        raise ValueError(f"{path} is not a valid safetensors file: {error}") from None
    header = _header(payload)
    metadata = header.get("__metadata__") or {}
    expected = metadata.get(CHECKSUM_KEY)
    if expected is not None and expected != _checksum(arrays):
        raise ValueError(f"{path} is corrupted: its tensors do not match the checksum it was "
                         "saved with")
    target = get_backend(backend)
    order = _saved_order(metadata, arrays) or _file_order(header)
    return {name: Tensor(target.asarray(arrays[name]), target) for name in order}


def _to_host(state_dict: Mapping[str, Tensor]) -> dict[str, Any]:
    import numpy as np

    if not isinstance(state_dict, Mapping):
        raise TypeError(
            f"save needs a mapping of names to tensors, got {type(state_dict).__name__}"
        )
    arrays = {}
    for name, value in state_dict.items():
        if not isinstance(name, str):
            raise TypeError(f"state dict names must be str, got {name!r}")
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}: expected a Tensor, got {type(value).__name__}")
        arrays[name] = np.asarray(value.numpy(), order="C")  # (ascontiguousarray makes 0-d 1-d)
    return arrays


def _checksum(arrays: Mapping[str, Any]) -> str:
    import numpy as np

    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.asarray(arrays[name], order="C")
        digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def _header(payload: bytes) -> dict[str, Any]:
    (length,) = struct.unpack("<Q", payload[:8])
    return json.loads(payload[8:8 + length])


def _saved_order(metadata: Mapping[str, str], arrays: Mapping[str, Any]) -> list[str] | None:
    try:
        order = json.loads(metadata.get(ORDER_KEY, "null"))
    except ValueError:
        return None
    return order if isinstance(order, list) and sorted(order) == sorted(arrays) else None


def _file_order(header: dict[str, Any]) -> list[str]:
    """Tensor names in the order of their data in the file (safetensors sorts the header)."""
    entries = {k: v for k, v in header.items() if k != "__metadata__"}
    return sorted(entries, key=lambda name: entries[name]["data_offsets"][0])


def _write_atomically(path: str, payload: bytes) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(8)}.tmp")
    # os.open with 0o666 lets the umask decide the mode, as for any new file (mkstemp: 0o600)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(payload)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
