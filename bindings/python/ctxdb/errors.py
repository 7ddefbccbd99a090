"""Exceptions: one ctxdb.Error per status code family of the C ABI.

Every error carries ``.code`` (the int status code of ctxdb.h),
``.code_name`` (e.g. "CTXDB_NOT_FOUND") and ``.message`` (the library's
message; for people, not for tests: test codes or classes).
"""
from __future__ import annotations

from typing import Dict, Optional, Type

from . import _capi

_CODE_NAMES = {
    _capi.OK: "CTXDB_OK",
    _capi.MISUSE: "CTXDB_MISUSE",
    _capi.INVALID_ARG: "CTXDB_INVALID_ARG",
    _capi.INVALID_UTF8: "CTXDB_INVALID_UTF8",
    _capi.INVALID_JSON: "CTXDB_INVALID_JSON",
    _capi.NOT_FOUND: "CTXDB_NOT_FOUND",
    _capi.CONFLICT: "CTXDB_CONFLICT",
    _capi.BUSY: "CTXDB_BUSY",
    _capi.BUDGET: "CTXDB_BUDGET",
    _capi.CHECK_FAILED: "CTXDB_CHECK_FAILED",
    _capi.CORRUPT: "CTXDB_CORRUPT",
    _capi.IO: "CTXDB_IO",
    _capi.NOMEM: "CTXDB_NOMEM",
    _capi.SCHEMA: "CTXDB_SCHEMA",
    _capi.READONLY: "CTXDB_READONLY",
    _capi.INTERNAL: "CTXDB_INTERNAL",
    _capi.NOTADB: "CTXDB_NOTADB",
    _capi.ROW: "CTXDB_ROW",
    _capi.DONE: "CTXDB_DONE",
}


def code_name(code: int) -> str:
    """The C name of a status code ("CTXDB_UNKNOWN" for a code unknown here)."""
    return _CODE_NAMES.get(code, "CTXDB_UNKNOWN")


class Error(Exception):
    """A ctxdb call failed. ``.code`` is the C status code."""

    def __init__(self, code: int, message: str = "") -> None:
        self.code = int(code)
        self.code_name = code_name(self.code)
        self.message = message
        super().__init__(f"{self.code_name}: {message}" if message else self.code_name)


class Misuse(Error):
    """CTXDB_MISUSE: the API was misused (e.g. the database is closed)."""


class InvalidInput(Error):
    """CTXDB_INVALID_ARG, CTXDB_INVALID_UTF8 or CTXDB_INVALID_JSON."""


class NotFound(Error):
    """CTXDB_NOT_FOUND: an id names nothing."""


class Conflict(Error):
    """CTXDB_CONFLICT: the id exists with different content, or a rule forbids it."""


class Busy(Error):
    """CTXDB_BUSY: the database stayed locked past busy_timeout_ms."""


class BudgetExceeded(Error):
    """CTXDB_BUDGET: a token budget cannot be met."""


class CheckFailed(Error):
    """CTXDB_CHECK_FAILED: a structured result failed its checks."""


class Corrupt(Error):
    """CTXDB_CORRUPT: stored or imported data fails its hash or is malformed."""


class IOFailure(Error):
    """CTXDB_IO: the file cannot be read or written."""


class OutOfMemory(Error):
    """CTXDB_NOMEM: out of memory."""


class SchemaError(Error):
    """CTXDB_SCHEMA: the file was written by a newer ctxdb."""


class ReadOnly(Error):
    """CTXDB_READONLY: a write on a read-only handle."""


class InternalError(Error):
    """CTXDB_INTERNAL: a bug in ctxdb; the message says where."""


class NotADatabase(Error):
    """CTXDB_NOTADB: the file is not a ctxdb database."""


_CLASSES: Dict[int, Type[Error]] = {
    _capi.MISUSE: Misuse,
    _capi.INVALID_ARG: InvalidInput,
    _capi.INVALID_UTF8: InvalidInput,
    _capi.INVALID_JSON: InvalidInput,
    _capi.NOT_FOUND: NotFound,
    _capi.CONFLICT: Conflict,
    _capi.BUSY: Busy,
    _capi.BUDGET: BudgetExceeded,
    _capi.CHECK_FAILED: CheckFailed,
    _capi.CORRUPT: Corrupt,
    _capi.IO: IOFailure,
    _capi.NOMEM: OutOfMemory,
    _capi.SCHEMA: SchemaError,
    _capi.READONLY: ReadOnly,
    _capi.INTERNAL: InternalError,
    _capi.NOTADB: NotADatabase,
}


def error_class(code: int) -> Type[Error]:
    """The exception class for a status code (Error for an unknown one)."""
    return _CLASSES.get(code, Error)


def error_for(code: int, message: str = "") -> Error:
    """An exception instance for a status code."""
    return error_class(code)(code, message)


def last_error(code: int, db: Optional[int] = None) -> Error:
    """The exception for a failed call, with ctxdb_errmsg(db) as message.

    Must run on the thread that made the failed call, before any other
    call on ``db`` (messages are per handle and per thread).
    """
    raw = _capi.ctxdb_errmsg(db)
    message = raw.decode("utf-8", "replace") if raw else ""
    return error_for(code, message)
