"""The package's exceptions, and how a library status becomes one.

`Error` is the extension module's (bindings/swig/python.i): every status
the library returns below 0 raises it, with `status`, `status_name` and
`field` (cb_last_error_field()). The functions here render it in Python's
words where an argument is at fault: ValueError or TypeError naming the
argument as the caller wrote it, OSError subclasses for a registry file.
"""

from __future__ import annotations

from datetime import timedelta

from . import _core
from ._config import BY_C_NAME, range_text

Error = _core.Error


class CircuitOpenError(Error):
    """The breaker rejected the call: it is OPEN, HALF_OPEN with every probe
    slot taken, or FORCED_OPEN. `retry_after` is how long until a call could
    be admitted (a timedelta, rounded up to the microsecond; exact in
    `retry_after_ns`), None when forced open (until a reset)."""

    status = _core.CB_REJECTED
    status_name = "CB_REJECTED"
    field = None
    # Set by the library's rejection (bindings/python/fastpath.c) or __init__.
    retry_after_ns: int | None = None
    breaker: str | None = None

    def __init__(self, message: str | None = None, *, retry_after: timedelta | None,
                 breaker: str | None = None) -> None:
        if message is None:
            super().__init__()
        else:
            super().__init__(message)
        self.retry_after_ns = None if retry_after is None else retry_after // timedelta(microseconds=1) * 1000
        self.breaker = breaker

    @property
    def retry_after(self) -> timedelta | None:
        ns = self.retry_after_ns
        return None if ns is None else timedelta(microseconds=-(-ns // 1000))

    def __str__(self) -> str:
        if self.args:
            return str(self.args[0])
        ra = self.retry_after
        wait = "until reset" if ra is None else f"retry after {ra.total_seconds():g} s"
        return f"lazybreaker: breaker {self.breaker!r} rejected the call: {wait}"

    def __repr__(self) -> str:
        return f"CircuitOpenError(breaker={self.breaker!r}, retry_after={self.retry_after!r})"


class ClosedError(Error):
    """The breaker can no longer be used: its registry is closed, or the
    breaker was destroyed (the library refused its handle, CB_EHANDLE)."""


def _copy_status(dst: BaseException, src: Error) -> BaseException:
    for attr in ("status", "status_name", "field"):
        setattr(dst, attr, getattr(src, attr, None))
    return dst


def py_name(c_field: str) -> str:
    """The Python name of a C field or parameter: without its unit."""
    f = BY_C_NAME.get(c_field)
    if f is not None:
        return f.py_name
    return c_field[: -len("_ns")] if c_field.endswith("_ns") else c_field


_ARGUMENT_NAMES = {"clock": "manual_clock", "flags": "create", "open_for": "open_for"}


def invalid(e: Error, what: str, given: dict[str, object] | None = None) -> BaseException:
    """A CB_EINVAL (or a refused name) as ValueError naming the argument."""
    field = e.field
    if field is None:
        return _copy_status(ValueError(f"lazybreaker: {what}: {e}"), e)
    name = py_name(field)
    name = _ARGUMENT_NAMES.get(name, name)
    f = BY_C_NAME.get(field)
    if f is not None:
        got = given.get(f.py_name) if given else None
        got_text = f", got {got!r}" if got is not None else ""
        return _copy_status(ValueError(f"lazybreaker: {what}: {name} must be {range_text(f)}{got_text}"), e)
    detail = _core.cb_last_error_message()
    return _copy_status(ValueError(f"lazybreaker: {what}: {name}: {detail or e}"), e)


def file_error(e: Error, path: str) -> BaseException:
    """A registry file's refusal as the OSError a Python user expects."""
    kinds: dict[int, type[OSError]] = {
        _core.CB_ENOENT: FileNotFoundError,
        _core.CB_EEXIST: FileExistsError,
        _core.CB_EPERM: PermissionError,
        _core.CB_EBUSY: BlockingIOError,
        _core.CB_EIO: OSError,
    }
    kind = kinds.get(e.status)
    if kind is None:
        if e.status == _core.CB_EINVAL:
            return invalid(e, f"Registry.open({path!r})")
        return e
    return _copy_status(kind(f"lazybreaker: {path}: {e}"), e)
