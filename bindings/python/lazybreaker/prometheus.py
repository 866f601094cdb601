"""A prometheus_client collector: a registry's breakers as metric families,
named as in docs/observability.md, read at each scrape.

    prometheus_client.REGISTRY.register(lazybreaker.prometheus.Collector(registry))

A shared registry file already holds every worker's breakers and counts,
so one worker's collector reports the whole pool: no multiprocess mode is
needed (and the families must not be summed across workers).
"""

from __future__ import annotations

from typing import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from ._breaker import Breaker
from ._errors import Error
from ._registry import Registry

_STATES = ("closed", "open", "half_open", "forced_open", "disabled")


class Collector:
    """Collects `registry` (default: the process's) at every scrape."""

    def __init__(self, registry: Registry | None = None) -> None:
        if registry is not None and not isinstance(registry, Registry):
            raise TypeError(f"lazybreaker: registry: expected a lazybreaker.Registry, got {type(registry).__name__}")
        self._registry = registry

    def describe(self) -> Iterator[Metric]:
        """The families without samples: registering reads no breaker."""
        return iter(_Families().all())

    def collect(self) -> Iterator[Metric]:
        registry = self._registry or Registry.default()
        families = _Families()
        breakers = registry.breakers()
        families.breakers.add_metric([], len(breakers))
        for breaker in breakers:
            try:
                families.add(breaker)
            except Error:
                continue  # destroyed since the listing
        families.events_dropped.add_metric([], registry.events_dropped())
        return iter(families.all())


class _Families:
    """The families of one scrape, with the library's own help texts
    (Registry.prometheus() gives the same text)."""

    def __init__(self) -> None:
        b = ["breaker"]
        self.breakers = GaugeMetricFamily("lazybreaker_breakers", "Breakers in the registry.")
        self.state = GaugeMetricFamily("lazybreaker_state", "The breaker's state: 1 for the state it is in, 0 for the others.",
                                       labels=["breaker", "state"])
        self.state_seconds = GaugeMetricFamily("lazybreaker_state_seconds", "Time in the current state, in seconds.", labels=b)
        self.admitted = CounterMetricFamily("lazybreaker_calls_admitted", "Calls the breaker admitted.", labels=b)
        self.rejected = CounterMetricFamily("lazybreaker_calls_rejected", "Calls the breaker rejected (failed fast).", labels=b)
        self.slow = CounterMetricFamily("lazybreaker_slow_calls", "Calls slower than slow_call_ns.", labels=b)
        self.outcomes = CounterMetricFamily("lazybreaker_outcomes", "Outcomes reported, by outcome.",
                                            labels=["breaker", "outcome"])
        self.trips = CounterMetricFamily("lazybreaker_trips", "Transitions into OPEN.", labels=b)
        self.failure_rate = GaugeMetricFamily("lazybreaker_failure_rate", "Failures per call in the window now (0..1).", labels=b)
        self.slow_rate = GaugeMetricFamily("lazybreaker_slow_call_rate", "Slow calls per call in the window now (0..1).",
                                           labels=b)
        self.consecutive = GaugeMetricFamily("lazybreaker_consecutive_failures", "The current run of failures (CLOSED).",
                                             labels=b)
        self.events_dropped = CounterMetricFamily("lazybreaker_events_dropped",
                                                  "Events the registry's queue dropped because it was full.")

    def add(self, breaker: Breaker) -> None:
        stats = breaker.stats()
        current = breaker.state
        name = breaker.name or f"#{breaker.handle:016x}"  # as the library's own text names it
        for state in _STATES:
            self.state.add_metric([name, state], 1.0 if state == current else 0.0)
        self.state_seconds.add_metric([name], stats.state_ns / 1e9)
        self.admitted.add_metric([name], stats.admitted)
        self.rejected.add_metric([name], stats.rejected)
        self.slow.add_metric([name], stats.slow)
        for outcome, count in (("success", stats.successes), ("failure", stats.failures),
                               ("ignored", stats.ignored)):
            self.outcomes.add_metric([name, outcome], count)
        self.trips.add_metric([name], stats.trips)
        self.failure_rate.add_metric([name], stats.failure_rate)
        self.slow_rate.add_metric([name], stats.slow_rate)
        self.consecutive.add_metric([name], stats.consecutive_failures)

    def all(self) -> list[Metric]:
        return [self.breakers, self.state, self.state_seconds, self.admitted, self.rejected, self.slow,
                self.outcomes, self.trips, self.failure_rate, self.slow_rate, self.consecutive,
                self.events_dropped]


__all__ = ["Collector"]
