"""Saving and loading state dicts as safetensors files: no pickle, PyTorch-compatible.

A file holds a flat ``name -> tensor`` mapping with PyTorch's key names and layouts, so a
dparray model's weights load into the matching ``torch.nn`` model and back.

Every failure is a clean error, and nothing is half done:

* Writes are atomic: the bytes go to a temporary file in the same folder, are flushed to disk,
  then renamed over the target, so a crash never leaves a half-written file. A temporary's name
  carries its writer's process id, and each save removes the temporaries that writers which
  no longer run left beside the same target.
* dparray records a SHA-256 of the tensors (names, dtypes, shapes, bytes) and of the user
  metadata in the file, and a file with dparray's metadata must match it: a damaged file is a
  ``ValueError``, never wrong weights. Files from other writers (PyTorch's ``safetensors``) have
  no dparray metadata and are checked for form only.
* ``load`` reads regular files only, without blocking on a FIFO or reading a device forever.

The file system's side of this (atomic replacement, regular files only) is ``dparray._files``.

NumPy is the host interchange format here, the one module of the core that uses it; it is
imported on first use, so ``import dparray`` loads no array library.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import struct
from collections.abc import Iterable, Mapping
from typing import Any, Literal, NamedTuple, overload

from dparray import dtypes as _dtypes
from dparray._checks import check_bool, describe
from dparray._files import read_regular_file, replace, target_of
from dparray._files import write_atomically as write_atomically
from dparray.backend import Backend, get_backend
from dparray.tensor import Tensor

RESERVED_PREFIX = "dparray."  # metadata keys dparray writes; users cannot
CHECKSUM_KEY = "dparray.sha256"
ORDER_KEY = "dparray.keys"  # safetensors lays tensors out by dtype; this keeps the dict's order
METADATA_ENTRY = "__metadata__"  # safetensors' name for the header's string metadata

# safetensors' dtype names for the dtypes dparray has, their NumPy (little-endian) forms, and
# their sizes in bytes; "bfloat16" is ml_dtypes' NumPy dtype (registered under that name when
# ml_dtypes is imported, which the NumPy backend does), stored in the host's order
_FORMATS = {"BOOL": "|b1", "U8": "|u1", "I8": "|i1", "I16": "<i2", "I32": "<i4", "I64": "<i8",
            "BF16": "bfloat16", "F16": "<f2", "F32": "<f4", "F64": "<f8"}
_SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "I32": 4, "I64": 8, "BF16": 2, "F16": 2,
          "F32": 4, "F64": 8}
_CODES = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "int32": "I32",
          "int64": "I64", "bfloat16": "BF16", "float16": "F16", "float32": "F32",
          "float64": "F64"}

def save(state_dict: Mapping[str, Tensor], path: str | os.PathLike[str],
         metadata: Mapping[str, str] | None = None, *, follow_symlinks: bool = True) -> None:
    """Write ``state_dict`` (name -> tensor) to ``path`` as a safetensors file, atomically.

    ``metadata`` is a mapping of strings kept in the file's header (``load(...,
    with_metadata=True)`` returns it); keys starting with ``"dparray."`` are dparray's own.
    Re-saving over a file keeps its permission bits; a new file gets the umask's. When ``path``
    is a symbolic link, its target is replaced (the link stays, as a text editor does) unless
    ``follow_symlinks=False``, which replaces the link itself by the file. A FIFO, a device or
    a folder at ``path`` is refused, and so is every bad argument, before anything is written.

    Raises:
        TypeError: ``state_dict`` is not a mapping of str to Tensor, or ``metadata`` not one of
            str to str.
        ValueError: a name or a metadata key is reserved (``"__metadata__"``, ``"dparray.*"``).
        OSError: ``path`` cannot be written, or is not a regular file (or a link to one).

    Examples:
        >>> import dparray as dp, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "weights.safetensors")
        >>> dp.save({"w": dp.ones(2, 3)}, path, metadata={"epoch": "3"})
        >>> dp.load(path)["w"].shape
        (2, 3)
    """
    _write(state_dict, path, _user_metadata(metadata, "save"), {}, follow_symlinks)


@overload
def load(path: str | os.PathLike[str], backend: str | Backend | None = None, *,
         with_metadata: Literal[False] = False) -> dict[str, Tensor]: ...


@overload
def load(path: str | os.PathLike[str], backend: str | Backend | None = None, *,
         with_metadata: Literal[True]) -> tuple[dict[str, Tensor], dict[str, str]]: ...


def load(path: str | os.PathLike[str], backend: str | Backend | None = None, *,
         with_metadata: bool = False) -> Any:
    """Read a safetensors file into ``name -> tensor`` on ``backend`` (the current one by
    default), in the order the state dict had when dparray saved it (else the file's).

    With ``with_metadata=True`` the result is ``(tensors, metadata)``: the mapping of strings
    that ``save(..., metadata=)`` wrote (dparray's own ``"dparray.*"`` keys left out).

    Raises:
        ValueError: the file is truncated, malformed or fails its checksum, or holds a tensor of
            a dtype dparray has no equivalent for (uint16, float8, ...); nothing is loaded.
        IsADirectoryError: ``path`` is a folder.
        OSError: ``path`` cannot be read, or is a FIFO, a device or a socket (refused before any
            byte is read, so a pipe never blocks and ``/dev/zero`` is never read).

    Examples:
        >>> import dparray as dp, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "weights.safetensors")
        >>> dp.save({"w": dp.zeros(2)}, path, metadata={"epoch": "3"})
        >>> tensors, metadata = dp.load(path, with_metadata=True)
        >>> list(tensors), metadata
        (['w'], {'epoch': '3'})
    """
    check_bool(with_metadata, "with_metadata", "load")
    file = _read(path, backend)
    return (file.tensors, file.metadata) if with_metadata else file.tensors


# ------------------------------------------------------------------------ for dparray.checkpoint
class SavedFile(NamedTuple):
    """A loaded file: its tensors, the user's metadata and dparray's own (``dparray.*``)."""

    tensors: dict[str, Tensor]
    metadata: dict[str, str]
    reserved: dict[str, str]


def _write(state_dict: Mapping[str, Tensor], path: str | os.PathLike[str],
           metadata: Mapping[str, str], reserved: Mapping[str, str],
           follow_symlinks: bool) -> None:
    """``save`` with dparray's own metadata keys (already namespaced) beside the user's."""
    import safetensors.numpy

    check_bool(follow_symlinks, "follow_symlinks", "save")
    _check_state_dict(state_dict)
    target, mode = target_of(os.fspath(path), follow_symlinks)
    arrays = _to_host(state_dict)
    header = {**metadata, **reserved, ORDER_KEY: json.dumps(list(arrays))}
    header[CHECKSUM_KEY] = _checksum(_host_entries(arrays), header)
    replace(target, safetensors.numpy.save(arrays, metadata=header), mode)


def _read(path: str | os.PathLike[str], backend: str | Backend | None) -> SavedFile:
    """The checked contents of a safetensors file; nothing is made before all is checked."""
    import numpy as np

    target = get_backend(backend)
    where = os.fspath(path)
    payload = read_regular_file(where)
    header, data = _split(payload, where)
    entries = _entries(header, len(data), where)
    metadata = _metadata(header, where)
    reserved = {k: v for k, v in metadata.items() if k.startswith(RESERVED_PREFIX)}
    if reserved:  # written by dparray: the checksum is mandatory
        expected = reserved.get(CHECKSUM_KEY)
        found = [(e.name, e.dtype, e.shape, data[e.start:e.end]) for e in entries]
        if expected is None:
            raise _corrupted(where, "it has dparray metadata but no checksum")
        if expected != _checksum(found, metadata):
            raise _corrupted(where, "its contents do not match the checksum it was saved with")
        order = _saved_order(reserved, [e.name for e in entries], where)
    else:
        order = [e.name for e in entries]  # _entries sorted them by position in the file
    by_name = {e.name: e for e in entries}
    tensors = {}
    for name in order:
        entry = by_name[name]
        dtype = _numpy_dtype(entry.dtype, target, where)
        if entry.start == entry.end:
            array = np.empty(entry.shape, dtype=dtype.newbyteorder("="))
        else:
            array = np.frombuffer(data, dtype=dtype, count=math.prod(entry.shape),
                                  offset=entry.start).reshape(entry.shape)
            if not array.flags.aligned or not array.dtype.isnative:
                array = array.astype(dtype.newbyteorder("="))
        tensors[name] = Tensor(target.asarray(array), target)
    user = {k: v for k, v in metadata.items() if not k.startswith(RESERVED_PREFIX)}
    return SavedFile(tensors, user, reserved)


def _numpy_dtype(code: str, target: Backend, where: str) -> Any:
    """The NumPy dtype of safetensors' ``code``, once ``target`` is known to hold it."""
    import numpy as np

    name = next(name for name, known in _CODES.items() if known == code)
    if not _dtypes.supports(target, name):
        raise TypeError(f"{where} holds {name} tensors, and backend {target.name!r} has no "
                        f"{name}: load it on another backend")
    if code == "BF16":
        import ml_dtypes  # registers "bfloat16" with NumPy

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(_FORMATS[code])


# ----------------------------------------------------------------------------------- checks
def _check_state_dict(state_dict: Any) -> None:
    if not isinstance(state_dict, Mapping):
        raise TypeError(
            f"save needs a mapping of names to tensors, got {type(state_dict).__name__}"
        )
    for name, value in state_dict.items():
        if not isinstance(name, str):
            raise TypeError(f"state dict names must be str, got {name!r}")
        if name == METADATA_ENTRY:
            raise ValueError(f"save: {METADATA_ENTRY!r} is safetensors' name for the file's "
                             "metadata; pass metadata= instead or rename the tensor")
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}: expected a Tensor, got {type(value).__name__}")


def _user_metadata(metadata: Any, where: str) -> dict[str, str]:
    """``metadata`` as a dict of str, refusing dparray's reserved keys."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise TypeError(f"{where}: metadata must be a mapping of str to str, got "
                        f"{describe(metadata)}")
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"{where}: metadata must map str to str, got {key!r}: "
                            f"{describe(value)}")
        if key.startswith(RESERVED_PREFIX):
            raise ValueError(f"{where}: metadata keys starting with {RESERVED_PREFIX!r} are "
                             f"dparray's own, got {key!r}")
    return dict(metadata)


def _to_host(state_dict: Mapping[str, Tensor]) -> dict[str, Any]:
    import numpy as np

    # (np.ascontiguousarray would make 0-d arrays 1-d)
    return {name: np.asarray(value.numpy(), order="C") for name, value in state_dict.items()}


class _Entry(NamedTuple):
    name: str
    dtype: str  # safetensors' name, one of _FORMATS
    shape: tuple[int, ...]
    start: int  # byte offsets in the data after the header
    end: int


def _split(payload: bytearray, where: str) -> tuple[dict[str, Any], memoryview]:
    """The header (a JSON object) and the data section of a safetensors file."""
    if len(payload) < 8:
        raise _invalid(where, f"{len(payload)} bytes is too short for a header")
    (length,) = struct.unpack("<Q", payload[:8])
    if length > len(payload) - 8:
        raise _invalid(where, f"its header claims {length} bytes, the file has "
                              f"{len(payload) - 8} after the length (truncated?)")
    try:
        header = json.loads(payload[8:8 + length].decode("utf-8"),
                            object_pairs_hook=_without_duplicates, parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise _invalid(where, f"its header is not JSON ({error})") from None
    if not isinstance(header, dict):
        raise _invalid(where, "its header is not a JSON object")
    return header, memoryview(payload)[8 + length:]


def _entries(header: dict[str, Any], data_length: int, where: str) -> list[_Entry]:
    """Every tensor's entry, checked as safetensors specifies, sorted by position: the tensors'
    bytes tile the data section exactly, with no gap, overlap or trailing byte."""
    entries = []
    for name, info in header.items():
        if name == METADATA_ENTRY:
            continue
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise _invalid(where, f"the entry of tensor {name!r} is not "
                                  "{dtype, shape, data_offsets}")
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(dtype, str):
            raise _invalid(where, f"tensor {name!r} has dtype {dtype!r}")
        if dtype not in _FORMATS:
            raise ValueError(f"{where}: tensor {name!r} has dtype {dtype}, which dparray has no "
                             f"equivalent for (it has {', '.join(_FORMATS)})")
        if not _naturals(shape) or not _naturals(offsets) or len(offsets) != 2:
            raise _invalid(where, f"tensor {name!r} has shape {shape!r} and data_offsets "
                                  f"{offsets!r}")
        start, end = offsets
        size = math.prod(shape) * _SIZES[dtype]
        if end - start != size:
            raise _invalid(where, f"tensor {name!r} of shape {tuple(shape)} and dtype {dtype} "
                                  f"needs {size} bytes, its data_offsets span {end - start}")
        entries.append(_Entry(name, dtype, tuple(shape), start, end))
    entries.sort(key=lambda e: (e.start, e.end))
    position = 0
    for entry in entries:
        if entry.start != position:
            raise _invalid(where, f"the bytes of tensor {entry.name!r} start at {entry.start}, "
                                  f"not at {position}")
        position = entry.end
    if position != data_length:
        raise _invalid(where, f"its tensors need {position} bytes of data, it has "
                              f"{data_length} (truncated?)")
    return entries


def _metadata(header: dict[str, Any], where: str) -> dict[str, str]:
    metadata = header.get(METADATA_ENTRY)
    if metadata is None:
        return {}
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise _invalid(where, f"its {METADATA_ENTRY} is not a mapping of str to str")
    return metadata


def _saved_order(reserved: Mapping[str, str], names: list[str], where: str) -> list[str]:
    """The state dict's order that dparray recorded: the file's names, each once."""
    try:
        order = json.loads(reserved.get(ORDER_KEY, ""))
    except (ValueError, RecursionError):
        order = None
    if (not isinstance(order, list) or not all(isinstance(n, str) for n in order)
            or len(order) != len(names) or set(order) != set(names)):
        raise _corrupted(where, f"its {ORDER_KEY} metadata does not list the tensors it holds")
    return order


def _checksum(entries: Iterable[tuple[str, str, tuple[int, ...], Any]],
              metadata: Mapping[str, str]) -> str:
    """SHA-256 of every tensor's name, dtype, shape and bytes, and of the metadata (but the
    checksum itself), in an order and framing that no two different files share."""
    digest = hashlib.sha256()
    for name, dtype, shape, data in sorted(entries, key=lambda entry: entry[0]):
        digest.update(json.dumps([name, dtype, list(shape), len(data)]).encode())
        digest.update(data)
    covered = sorted((k, v) for k, v in metadata.items() if k != CHECKSUM_KEY)
    digest.update(json.dumps(covered).encode())
    return digest.hexdigest()


def _host_entries(arrays: Mapping[str, Any]) -> list[tuple[str, str, tuple[int, ...], Any]]:
    import numpy as np

    return [(name, _CODES[a.dtype.name], a.shape, a.reshape(-1).view(np.uint8))
            for name, a in arrays.items()]


def _naturals(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value
    )


def _without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("a key appears twice")  # readers would disagree on which one counts
    return result


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _invalid(where: str, reason: str) -> ValueError:
    return ValueError(f"{where} is not a valid safetensors file: {reason}")


def _corrupted(where: str, reason: str) -> ValueError:
    return ValueError(f"{where} is corrupted: {reason}")
