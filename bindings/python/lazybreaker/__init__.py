"""lazybreaker: a lazy, lock-free circuit breaker, shared by every process
that opens the same registry file (a gunicorn pool's workers, restarts).

    import lazybreaker

    registry = lazybreaker.Registry.open("/dev/shm/app.lbr", create=True)
    payments = registry.get_or_create("payments", lazybreaker.Config(failure_threshold=3, open_duration=10))

    @payments
    def charge(order): ...

    with payments:
        ...

The state machine is the C library's (liblazybreaker); this package is its
Python face over SWIG's module lazybreaker._core. docs/python.md describes
every call.
"""

from . import _core
from ._breaker import Breaker, Permit, Stats
from ._config import FIELDS, Config, Duration, PolicyName
from ._errors import CircuitOpenError, ClosedError, Error
from ._registry import Event, Registry
from ._watch import EventLog, EventWatcher

__version__: str = _core.cb_version_string()

__all__ = [
    "Breaker",
    "CircuitOpenError",
    "ClosedError",
    "Config",
    "Duration",
    "Error",
    "Event",
    "EventLog",
    "EventWatcher",
    "FIELDS",
    "Permit",
    "PolicyName",
    "Registry",
    "Stats",
    "__version__",
]
