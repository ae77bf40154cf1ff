"""Writing and reading files safely: atomic replacement, regular files only.

``write_atomically`` puts the bytes in a temporary file in the same folder, flushes it to
disk, then renames it over the target, so a crash never leaves a half-written file; the
temporary's name carries its writer's process id, and each write removes the temporaries that
writers which no longer run left beside the same target. ``replace`` does the same for a
writer that streams its bytes into the temporary file, so nothing needs the whole payload in
memory. ``open_regular_file`` opens regular files only, without blocking on a FIFO or reading a
device forever, and ``read_exactly`` fills a buffer from it or says the file shrank.
``dparray.io`` saves and loads its safetensors files through these; anything else that writes
files may too (the demo's plots).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterator
from io import FileIO
from typing import BinaryIO

from dparray._checks import check_bool

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_OPEN_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def write_atomically(path: str | os.PathLike[str], payload: bytes, *,
                     follow_symlinks: bool = True) -> None:
    """Replace the file at ``path`` by ``payload`` in one step: a temporary file beside it,
    flushed to disk, then renamed over it, so readers see the old file or the new one, never
    a part. Anything may write through it (the demo's plots do).

    Keeps an existing file's permission bits (not its owner). ``follow_symlinks`` as in
    ``save``; FIFOs, devices and folders are refused with an ``OSError``, untouched.
    """
    check_bool(follow_symlinks, "follow_symlinks", "write_atomically")
    target, mode = target_of(os.fspath(path), follow_symlinks)
    replace(target, lambda file: file.write(payload), mode)


@contextlib.contextmanager
def open_regular_file(path: str) -> Iterator[tuple[FileIO, int]]:
    """The regular file at ``path``, open for reading, and its size. Anything else is refused
    before a byte is read: opened without blocking (a FIFO with no writer would block the
    open), checked with fstat on the open descriptor (no race with a rename)."""
    _refuse_non_regular(os.stat(path).st_mode, path, "load")  # opening a device can act
    descriptor = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_NOCTTY", 0) | _OPEN_FLAGS)
    try:
        info = os.fstat(descriptor)
        _refuse_non_regular(info.st_mode, path, "load")
        if _NONBLOCK:
            os.set_blocking(descriptor, True)
        with open(descriptor, "rb", buffering=0, closefd=False) as file:
            yield file, info.st_size
    finally:
        os.close(descriptor)


def read_exactly(file: FileIO, buffer: memoryview, path: str) -> None:
    """Fill ``buffer`` from ``file``'s position on; a ValueError if the file ends first (it
    shrank while it was read: its size was checked when it was opened)."""
    done = 0
    while done < len(buffer):
        count = file.readinto(buffer[done:])
        if not count:
            raise ValueError(f"{path} changed while it was read: it shrank by at least "
                             f"{len(buffer) - done} bytes")
        done += count


def read_regular_file(path: str) -> bytearray:
    """The bytes of the regular file at ``path`` (see ``open_regular_file``), read for exactly
    the size it has."""
    with open_regular_file(path) as (file, size):
        buffer = bytearray(size)
        read_exactly(file, memoryview(buffer), path)
        return buffer


def _refuse_non_regular(mode: int, path: str, action: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, f"{action} needs a regular file, this is a "
                                              "directory", path)
    kinds = [(stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")]
    kind = next((name for test, name in kinds if test(mode)), "not a regular file")
    raise OSError(errno.EINVAL, f"{action} needs a regular file, this is {kind}", path)


def target_of(path: str, follow_symlinks: bool) -> tuple[str, int | None]:
    """The path to rename the new file onto, and the permission bits to give it (None: the
    umask's, as for any new file). Refuses, before anything is written, what is not a file."""
    target = os.path.realpath(path) if follow_symlinks else path
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return target, None
    if stat.S_ISLNK(info.st_mode):
        if follow_symlinks:  # realpath stops where links loop
            raise OSError(errno.ELOOP, "save: the symbolic links loop", path)
        return target, None  # the link itself is replaced, its target left alone
    _refuse_non_regular(info.st_mode, path, "save")
    return target, info.st_mode & 0o777


def replace(target: str, write: Callable[[BinaryIO], object], mode: int | None) -> None:
    """Call ``write(file)`` on a temporary beside ``target``, flush it to disk, then rename it
    over ``target``; if anything fails, the temporary is removed and ``target`` is untouched."""
    folder, name = os.path.split(os.path.abspath(target))
    _remove_stale_temporaries(folder, name)
    temporary = os.path.join(folder, f".{name}.{os.getpid()}.{secrets.token_hex(8)}.tmp")
    # os.open with 0o666 lets the umask decide the mode, as for any new file (mkstemp: 0o600)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | _OPEN_FLAGS
    descriptor = os.open(temporary, flags, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as file:
            if mode is not None:
                os.chmod(file.fileno() if os.chmod in os.supports_fd else temporary, mode)
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _sync_folder(folder)


def _remove_stale_temporaries(folder: str, name: str) -> None:
    """Delete the temporaries of ``name`` left by writers that were killed mid-save: those whose
    process id is no longer running (never another live process's, nor this one's)."""
    pattern = re.compile(rf"\.{re.escape(name)}\.(\d+)\.[0-9a-f]{{16}}\.tmp")
    try:
        entries = os.listdir(folder)
    except OSError:
        return  # the write that follows reports what is wrong with the folder
    for entry in entries:
        match = pattern.fullmatch(entry)
        if match and not _is_running(int(match.group(1))):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, entry))


def _is_running(pid: int) -> bool:
    if pid == os.getpid() or os.name != "posix":
        return True  # another thread's save; elsewhere os.kill(pid, 0) would end the process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it runs, as another user
    except (OverflowError, OSError):
        return False  # no process can have that id
    return True


def _sync_folder(folder: str) -> None:
    """Flush the rename itself to disk (POSIX; best effort elsewhere)."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
