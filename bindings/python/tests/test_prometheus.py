"""lazybreaker.prometheus.Collector: a registry's breakers in
prometheus_client's own registry, the same families and samples as the
library's text (Registry.prometheus(), docs/observability.md)."""

from __future__ import annotations

from typing import Any, Iterator

import prometheus_client
import pytest
from prometheus_client.parser import text_string_to_metric_families

import lazybreaker as lb
from lazybreaker.prometheus import Collector


@pytest.fixture
def reg() -> Iterator[lb.Registry]:
    with lb.Registry.manual_clock() as r:
        yield r


def families(text: str) -> list[tuple[str, str, str, list[Any]]]:
    return [(f.name, f.type, f.documentation,
             sorted((s.name, sorted(s.labels.items()), s.value) for s in f.samples))  # type: ignore[misc]
            for f in text_string_to_metric_families(text)]


def exposition(collector: Collector) -> str:
    registry = prometheus_client.CollectorRegistry()
    registry.register(collector)
    return prometheus_client.generate_latest(registry).decode()


def busy_registry(reg: lb.Registry) -> None:
    a = reg.get_or_create("payments", lb.Config(failure_threshold=2, open_duration=10))
    for outcome in ("success", "failure", "failure"):
        a.acquire().report(outcome)
    assert a.try_acquire() is None
    reg.get_or_create('quo"ted\\name').acquire().ignore()
    reg.create(None).force_open()
    reg.advance(3)


def test_the_collector_gives_the_librarys_families_and_samples(reg: lb.Registry) -> None:
    busy_registry(reg)
    assert families(exposition(Collector(reg))) == families(reg.prometheus())


def test_the_collector_reads_the_registry_at_each_scrape(reg: lb.Registry) -> None:
    collector = Collector(reg)
    before = exposition(collector)
    reg.get_or_create("late").trip()
    after = exposition(collector)
    assert 'breaker="late"' not in before
    assert 'lazybreaker_state{breaker="late",state="open"} 1.0' in after


def test_registering_the_collector_reads_no_breaker(reg: lb.Registry) -> None:
    described = list(Collector(reg).describe())
    assert [f.name for f in described] == [f[0] for f in families(reg.prometheus())]
    assert all(f.samples == [] for f in described)


def test_the_default_collector_reads_the_processs_registry() -> None:
    lb.Registry.default().get_or_create("prometheus-default-test")
    assert 'breaker="prometheus-default-test"' in exposition(Collector())


def test_a_registry_that_is_not_one_is_refused_by_name() -> None:
    bad: Any = "/dev/shm/app.lbr"
    with pytest.raises(TypeError, match="lazybreaker: registry: expected a lazybreaker.Registry"):
        Collector(bad)
