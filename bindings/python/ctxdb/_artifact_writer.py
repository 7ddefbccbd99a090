"""The streaming artifact put (ctxdb_artifact_writer_*): content too large
to hold in memory goes in piece by piece.

    with db.artifact_writer(kind="command_log", name="build.log") as w:
        for block in iter(lambda: f.read(1 << 20), b""):
            w.write(block)
    print(w.artifact["id"])

Leaving the ``with`` block commits; an exception in it aborts (nothing is
stored). A writer is also a writable binary file object for
shutil.copyfileobj and friends. While it is open, other calls on its
database raise Misuse: open a second Database to use the file meanwhile.
"""
from __future__ import annotations

import json
import threading
import weakref
from ctypes import byref, c_size_t, c_void_p, string_at
from typing import TYPE_CHECKING, Any, Optional

from . import _capi
from .errors import InternalError, Misuse, last_error
from .types import Artifact

if TYPE_CHECKING:
    from ._database import _Conn


class _WriterState:
    """The C writer pointer, shared by an ArtifactWriter and its finalizer."""
    __slots__ = ("ptr",)

    def __init__(self, ptr: int) -> None:
        self.ptr: Optional[int] = ptr


def _free_writer(lock: threading.RLock, state: _WriterState) -> None:
    # ctxdb_artifact_writer_free is valid after the handle closed (it then
    # only releases the writer): no need to look at the handle.
    with lock:
        ptr, state.ptr = state.ptr, None
        if ptr is not None:
            _capi.ctxdb_artifact_writer_free(ptr)


class ArtifactWriter:
    """A streaming put: write() bytes, then commit() for the artifact, or
    abort(). Garbage collected uncommitted, it aborts."""

    def __init__(self, conn: "_Conn", ptr: int) -> None:
        self._conn = conn  # keeps the handle open while the writer lives
        self._state = _WriterState(ptr)
        self._finalizer = weakref.finalize(self, _free_writer, conn.lock, self._state)
        self.artifact: Optional[Artifact] = None  # set by commit()

    def _ptr(self) -> int:
        ptr = self._state.ptr
        if ptr is None:
            raise Misuse(_capi.MISUSE, "the artifact writer is closed (committed or aborted)")
        return ptr

    def write(self, data: Any) -> int:
        """Appends bytes (bytes, bytearray or memoryview; a str as UTF-8);
        returns how many."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        elif isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        elif not isinstance(data, bytes):
            raise TypeError(f"ArtifactWriter.write() takes bytes or str, "
                            f"not {type(data).__name__}")
        with self._conn.lock:
            rc = _capi.ctxdb_artifact_writer_write(self._ptr(), data, len(data))
            if rc != _capi.OK:
                raise last_error(rc, None)
        return len(data)

    def commit(self) -> Artifact:
        """Stores what was written; returns the artifact and closes the writer."""
        out = c_void_p()
        out_len = c_size_t(0)
        with self._conn.lock:
            rc = _capi.ctxdb_artifact_writer_commit(self._ptr(), byref(out), byref(out_len))
            try:
                if rc != _capi.OK:
                    raise last_error(rc, None)
                if not out.value:
                    raise InternalError(_capi.INTERNAL, "ctxdb_artifact_writer_commit gave no output")
                self.artifact = json.loads(string_at(out.value, out_len.value))
            finally:
                if out.value:
                    _capi.ctxdb_free(out.value)
                self._finalizer()
        return self.artifact

    def abort(self) -> None:
        """Drops everything written (nothing is stored); closes the writer.
        A no-op once closed."""
        self._finalizer()

    # -- a writable binary file object --
    close = abort

    @property
    def closed(self) -> bool:
        return self._state.ptr is None

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False

    def flush(self) -> None:
        pass

    def __enter__(self) -> "ArtifactWriter":
        self._ptr()
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if exc_type is not None or self.closed:
            self.abort()
        else:
            self.commit()
