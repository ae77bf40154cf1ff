"""Saving and loading state as safetensors files: no pickle, PyTorch-compatible.

A file holds a flat ``name -> tensor`` mapping with PyTorch's key names and layouts, so a
dparray model's weights load into the matching ``torch.nn`` model and back. Nested state --
``{"model": model.state_dict(), "optimizer": opt.state_dict(), "step": n, "config": {...}}`` --
goes into one file too: each tensor under its place (``model/fc1.weight``), the structure and
every other value as JSON in the header (``dparray._nested``), and ``load`` gives it back as it
was. Objects themselves (a whole ``Module``) are never pickled: save their state.

Every failure is a clean error, and nothing is half done:

* Writes are atomic: the bytes go to a temporary file in the same folder, are flushed to disk,
  then renamed over the target, so a crash never leaves a half-written file. A temporary's name
  carries its writer's process id, and each save removes the temporaries that writers which
  no longer run left beside the same target. The tensors are streamed into it one at a time,
  each from its host array (on NumPy, the tensor's own memory), so a save needs no copy of the
  whole payload.
* dparray records a SHA-256 of the tensors (names, dtypes, shapes, bytes) and of the user
  metadata in the file, and a file with dparray's metadata must match it: a damaged file is a
  ``ValueError``, never wrong weights. Files from other writers (PyTorch's ``safetensors``) have
  no dparray metadata and are checked for form only.
* ``load`` reads the header first and checks it against the file's size -- at most
  ``MAX_HEADER_BYTES``, names that are Unicode, shapes an array can have, tensors that tile the
  data exactly -- so a damaged header costs its own bytes, never the file's; only then does it
  read each tensor into an array of its own. It reads regular files only, without blocking on
  a FIFO or reading a device forever.

The file system's side of this (atomic replacement, regular files only) is ``dparray._files``.
The files are laid out as the ``safetensors`` library lays them out (tensors by dtype, then
name; the header padded to 8 bytes), so its readers -- PyTorch's included -- read them.

NumPy is the host interchange format here, the one module of the core that uses it; it is
imported on first use, so ``import dparray`` loads no array library.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import struct
from collections.abc import Iterable, Mapping
from io import FileIO
from typing import Any, BinaryIO, Literal, NamedTuple, overload

from dparray import _nested
from dparray import dtypes as _dtypes
from dparray._checks import check_bool, describe
from dparray._files import open_regular_file, read_exactly, replace, target_of
from dparray._files import write_atomically as write_atomically
from dparray.backend import Backend, get_backend
from dparray.tensor import Tensor

RESERVED_PREFIX = "dparray."  # metadata keys dparray writes; users cannot
CHECKSUM_KEY = "dparray.sha256"
ORDER_KEY = "dparray.keys"  # safetensors lays tensors out by dtype; this keeps the dict's order
STRUCTURE_KEY = "dparray.structure"  # nested state: the JSON description of dparray._nested
METADATA_ENTRY = "__metadata__"  # safetensors' name for the header's string metadata
MAX_HEADER_BYTES = 100_000_000  # the safetensors library's own limit
MAX_AXES = 64  # NumPy's (and CuPy's) most dimensions

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
# the safetensors library's order of the tensors in a file: by dtype so (widest first), then name
_LAYOUT_ORDER = {code: i for i, code in enumerate(
    ["I64", "F64", "F32", "I32", "BF16", "F16", "I16", "I8", "U8", "BOOL"])}


def save(state: Mapping[Any, Any], path: str | os.PathLike[str],
         metadata: Mapping[str, str] | None = None, *, follow_symlinks: bool = True) -> None:
    """Write ``state`` to ``path`` as a safetensors file, atomically.

    ``state`` is a state dict (name -> tensor), written as PyTorch's ``safetensors`` writes one
    and read by it, or nested state: a dict of state dicts, lists, tuples, numbers, strings and
    None (``{"model": model.state_dict(), "optimizer": opt.state_dict(), "step": n}``), whose
    tensors are stored by their place (``model/fc1.weight``) and the rest as JSON in the header,
    so that ``load`` gives it back as it was. Nothing is pickled: a ``Module`` or another
    object is refused (save its ``state_dict()``).

    ``metadata`` is a mapping of strings kept in the file's header (``load(...,
    with_metadata=True)`` returns it); keys starting with ``"dparray."`` are dparray's own.
    Re-saving over a file keeps its permission bits; a new file gets the umask's. When ``path``
    is a symbolic link, its target is replaced (the link stays, as a text editor does) unless
    ``follow_symlinks=False``, which replaces the link itself by the file. A FIFO, a device or
    a folder at ``path`` is refused, and so is every bad argument, before anything is written.

    Raises:
        TypeError: ``state`` is not a mapping, holds something that is neither a tensor nor
            JSON data (numbers, strings, None, lists, tuples, dicts), or a key that is not a
            str or an int; ``metadata`` is not a mapping of str to str.
        ValueError: a name or a metadata key is reserved (``"__metadata__"``, ``"dparray.*"``),
            is not Unicode (a lone surrogate), or two tensors would get one name.
        OSError: ``path`` cannot be written, or is not a regular file (or a link to one).

    Examples:
        >>> import dparray as dp, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "weights.safetensors")
        >>> dp.save({"w": dp.ones(2, 3)}, path, metadata={"epoch": "3"})
        >>> dp.load(path)["w"].shape
        (2, 3)
        >>> model = dp.nn.Linear(3, 2)
        >>> opt = dp.optim.SGD(model.parameters(), lr=0.1)
        >>> dp.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 7},
        ...         path)
        >>> state = dp.load(path)
        >>> state["step"], list(state["model"])
        (7, ['weight', 'bias'])
    """
    user = _user_metadata(metadata, "save")
    tensors, reserved = _flattened(state)
    _write(tensors, path, user, reserved, follow_symlinks)


@overload
def load(path: str | os.PathLike[str], backend: str | Backend | None = None, *,
         with_metadata: Literal[False] = False) -> dict[Any, Any]: ...


@overload
def load(path: str | os.PathLike[str], backend: str | Backend | None = None, *,
         with_metadata: Literal[True]) -> tuple[dict[Any, Any], dict[str, str]]: ...


def load(path: str | os.PathLike[str], backend: str | Backend | None = None, *,
         with_metadata: bool = False) -> Any:
    """Read a safetensors file into ``name -> tensor`` on ``backend`` (the current one by
    default), in the order the state dict had when dparray saved it (else the file's); a file
    of nested state that ``save`` wrote comes back nested, as it was saved.

    With ``with_metadata=True`` the result is ``(state, metadata)``: the mapping of strings
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
    state = _structure(file, os.fspath(path)) if STRUCTURE_KEY in file.reserved else file.tensors
    return (state, file.metadata) if with_metadata else state


# ------------------------------------------------------------------------ for dparray.checkpoint
class SavedFile(NamedTuple):
    """A loaded file: its tensors, the user's metadata and dparray's own (``dparray.*``)."""

    tensors: dict[str, Tensor]
    metadata: dict[str, str]
    reserved: dict[str, str]


def _write(state_dict: Mapping[str, Tensor], path: str | os.PathLike[str],
           metadata: Mapping[str, str], reserved: Mapping[str, str],
           follow_symlinks: bool) -> None:
    """Write the flat ``state_dict`` with dparray's own metadata keys (already namespaced)
    beside the user's: the checksum first (each tensor's host bytes in turn), then the header
    and each tensor's bytes streamed into the temporary file."""
    check_bool(follow_symlinks, "follow_symlinks", "save")
    _check_state_dict(state_dict)
    target, mode = target_of(os.fspath(path), follow_symlinks)
    layout = sorted(((name, _CODES[t.dtype.name], tuple(t.shape)) for name, t in
                     state_dict.items()), key=lambda e: (_LAYOUT_ORDER[e[1]], e[0]))
    header = {**metadata, **reserved, ORDER_KEY: json.dumps(list(state_dict))}
    header[CHECKSUM_KEY] = _checksum(
        [(name, code, shape, functools.partial(_host_bytes, state_dict[name]))
         for name, code, shape in layout], header)
    head = _header_bytes(layout, header)

    def stream(file: BinaryIO) -> None:
        file.write(head)
        for name, _, _ in layout:
            file.write(_host_bytes(state_dict[name]))

    replace(target, stream, mode)


def _read(path: str | os.PathLike[str], backend: str | Backend | None) -> SavedFile:
    """The checked contents of a safetensors file; nothing is made before all is checked."""
    import numpy as np

    target = get_backend(backend)
    where = os.fspath(path)
    with open_regular_file(where) as (file, size):
        header, data_length = _read_header(file, size, where)
        entries = _entries(header, data_length, where)
        metadata = _metadata(header, where)
        dtypes = {e.name: _numpy_dtype(e.dtype, target, where) for e in entries}  # or refused
        arrays = {}
        for entry in entries:  # in file order: the bytes follow one another
            array = np.empty(entry.shape, dtype=dtypes[entry.name])
            if entry.end > entry.start:
                read_exactly(file, memoryview(_bytes_of(array)), where)
            arrays[entry.name] = array
    reserved = {k: v for k, v in metadata.items() if k.startswith(RESERVED_PREFIX)}
    if reserved:  # written by dparray: the checksum is mandatory
        expected = reserved.get(CHECKSUM_KEY)
        if expected is None:
            raise _corrupted(where, "it has dparray metadata but no checksum")
        found = [(e.name, e.dtype, e.shape, _bytes_of(arrays[e.name])) for e in entries]
        if expected != _checksum(found, metadata):
            raise _corrupted(where, "its contents do not match the checksum it was saved with")
        order = _saved_order(reserved, [e.name for e in entries], where)
    else:
        order = [e.name for e in entries]  # _entries sorted them by position in the file
    tensors = {}
    for name in order:
        array = arrays[name]
        if not array.dtype.isnative:
            array = array.astype(array.dtype.newbyteorder("="))
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


# ----------------------------------------------------------------------------------- nesting
def _flattened(state: Any) -> tuple[Mapping[str, Tensor], dict[str, str]]:
    """The tensors to write and dparray's metadata for ``state``: a flat state dict as it is
    (the file any safetensors reader reads as it is), nested state flattened with its
    description."""
    if not isinstance(state, Mapping):
        if hasattr(state, "state_dict"):
            raise TypeError(
                f"save: got a {type(state).__name__}; dparray saves no objects (nothing is "
                "pickled). Save its state -- dp.save(model.state_dict(), path) -- and load it "
                "into a new one: model.load_state_dict(dp.load(path))"
            )
        raise TypeError("save needs a mapping: a state dict of names to tensors, or nested "
                        f"state (a dict of state dicts and JSON values), got {describe(state)}")
    if all(isinstance(k, str) and isinstance(v, Tensor) for k, v in state.items()):
        return state, {}
    tensors: dict[str, Tensor] = {}
    described = _nested.encode(state, "save", tensors)
    return tensors, {STRUCTURE_KEY: json.dumps(described)}


def _structure(file: SavedFile, where: str) -> dict[Any, Any]:
    """The nested state that ``save`` described in ``file``, with its tensors in place."""
    try:
        used: set[str] = set()
        state = _nested.decode(json.loads(file.reserved[STRUCTURE_KEY]), file.tensors, used)
        if not isinstance(state, dict):
            raise _nested.NotEncoded(f"its state is {describe(state)}, not a dict")
        if used != set(file.tensors):
            unused = sorted(set(file.tensors) - used)
            raise _nested.NotEncoded(f"it holds tensors it does not describe: {unused[:5]}")
    except (ValueError, RecursionError, _nested.NotEncoded) as error:
        raise _corrupted(where, f"its {STRUCTURE_KEY} metadata is not one dparray wrote "
                                f"({error})") from None
    return state


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
        _check_unicode(name, "tensor name", "save")
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
        _check_unicode(key, "metadata key", where)
        _check_unicode(value, "metadata value", where)
    return dict(metadata)


def _check_unicode(text: str, what: str, where: str) -> None:
    """A ValueError for a str that UTF-8 cannot encode (a lone surrogate), which no
    safetensors reader could read back."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"{where}: the {what} {text!r} is not valid Unicode ({error.reason} "
                         f"at position {error.start}); a file can hold only UTF-8 text") from None


# ---------------------------------------------------------------------------- the file format
def _host_bytes(tensor: Tensor) -> Any:
    """``tensor``'s values as little-endian bytes in row-major order (a uint8 array: on NumPy,
    the tensor's own memory when it is contiguous)."""
    import numpy as np

    array = np.asarray(tensor.numpy(), order="C")  # (np.ascontiguousarray makes 0-d arrays 1-d)
    return _bytes_of(array.astype(array.dtype.newbyteorder("<"), copy=False))


def _bytes_of(array: Any) -> Any:
    """A contiguous array's memory as a 1-D uint8 array (no copy)."""
    import numpy as np

    return array.reshape(-1).view(np.uint8)


def _header_bytes(layout: list[tuple[str, str, tuple[int, ...]]],
                  metadata: Mapping[str, str]) -> bytes:
    """The length prefix and the header of a file of ``layout`` (name, dtype, shape, in file
    order) and ``metadata``: JSON in UTF-8, padded with spaces to a multiple of 8 bytes, as the
    safetensors library writes it (the data that follows is then 8-byte aligned)."""
    described: dict[str, Any] = {METADATA_ENTRY: dict(sorted(metadata.items()))}
    offset = 0
    for name, code, shape in layout:
        size = math.prod(shape) * _SIZES[code]
        described[name] = {"dtype": code, "shape": list(shape),
                           "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(described, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text


class _Entry(NamedTuple):
    name: str
    dtype: str  # safetensors' name, one of _FORMATS
    shape: tuple[int, ...]
    start: int  # byte offsets in the data after the header
    end: int


def _read_header(file: FileIO, size: int, where: str) -> tuple[dict[str, Any], int]:
    """The header (a JSON object) of the file of ``size`` bytes open at its start, and the
    length of the data section after it: the header's claimed length is checked against the
    file's size before it is read."""
    if size < 8:
        raise _invalid(where, f"{size} bytes is too short for a header")
    prefix = bytearray(8)
    read_exactly(file, memoryview(prefix), where)
    (length,) = struct.unpack("<Q", prefix)
    if length > size - 8:
        raise _invalid(where, f"its header claims {length} bytes, the file has "
                              f"{size - 8} after the length (truncated?)")
    if length > MAX_HEADER_BYTES:
        raise _invalid(where, f"its header claims {length} bytes; a safetensors header has at "
                              f"most {MAX_HEADER_BYTES}")
    text = bytearray(length)
    read_exactly(file, memoryview(text), where)
    try:
        header = json.loads(text.decode("utf-8"), object_pairs_hook=_without_duplicates,
                            parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise _invalid(where, f"its header is not JSON ({error})") from None
    if not isinstance(header, dict):
        raise _invalid(where, "its header is not a JSON object")
    return header, size - 8 - length


def _entries(header: dict[str, Any], data_length: int, where: str) -> list[_Entry]:
    """Every tensor's entry, checked as safetensors specifies, sorted by position: the tensors'
    bytes tile the data section exactly, with no gap, overlap or trailing byte; names are
    Unicode and shapes ones an array can have."""
    entries = []
    for name, info in header.items():
        if name == METADATA_ENTRY:
            continue
        _check_read_unicode(name, f"the tensor name {name!r}", where)
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
            raise _invalid(where, f"tensor {name!r} has shape {_shown(shape)} and data_offsets "
                                  f"{_shown(offsets)}")
        itemsize = _SIZES[dtype]
        _check_shape(name, shape, itemsize, where)
        start, end = offsets
        size = math.prod(shape) * itemsize
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


def _check_shape(name: str, shape: list[int], itemsize: int, where: str) -> None:
    """Refuse a shape no array can have: more than ``MAX_AXES`` axes, or sizes whose product
    (the zeros left out, as NumPy counts) is 2**63 bytes or more."""
    if len(shape) > MAX_AXES:
        raise _invalid(where, f"tensor {name!r} has {len(shape)} axes; an array has at most "
                              f"{MAX_AXES}")
    total = itemsize
    for n in shape:
        total *= max(n, 1)
        if total >= 2**63:
            raise _invalid(where, f"tensor {name!r} has shape {_shown(shape)}, too large for "
                                  "any array (2**63 bytes or more, zero sizes aside)")


def _metadata(header: dict[str, Any], where: str) -> dict[str, str]:
    metadata = header.get(METADATA_ENTRY)
    if metadata is None:
        return {}
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise _invalid(where, f"its {METADATA_ENTRY} is not a mapping of str to str")
    for key, value in metadata.items():
        _check_read_unicode(key, f"the metadata key {key!r}", where)
        _check_read_unicode(value, f"the metadata value of {key!r}", where)
    return metadata


def _check_read_unicode(text: str, what: str, where: str) -> None:
    """Refuse a str of the header that JSON's escapes made but UTF-8 cannot hold (a lone
    surrogate): loaded, it could never be saved again."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _invalid(where, f"{what} is not valid Unicode (a lone surrogate)") from None


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
    checksum itself), in an order and framing that no two different files share. A tensor's
    bytes may be given as a function that returns them, called once, when they are hashed (so
    a save holds one tensor's host copy at a time)."""
    digest = hashlib.sha256()
    for name, dtype, shape, data in sorted(entries, key=lambda entry: entry[0]):
        if callable(data):
            data = data()
        digest.update(json.dumps([name, dtype, list(shape), len(data)]).encode())
        digest.update(data)
    covered = sorted((k, v) for k, v in metadata.items() if k != CHECKSUM_KEY)
    digest.update(json.dumps(covered).encode())
    return digest.hexdigest()


def _naturals(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value
    )


def _shown(value: Any) -> str:
    """``value`` for a message, shortened (a shape may have a million entries)."""
    text = repr(value)
    if isinstance(value, list) and len(text) > 80:
        return f"{text[:60]}... ({len(value)} entries)"
    return text


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
