// Package lbprometheus is a prometheus.Collector of a lazybreaker
// registry's breakers, so they join the application's own Prometheus
// registry (and its /metrics) rather than a separate text endpoint.
//
//	prometheus.MustRegister(lbprometheus.NewCollector(reg))
//
// The metrics are the library's own (docs/observability.md), read from
// its Prometheus text at each scrape and parsed once there: this package
// names no metric, so they cannot drift from the library's. For a
// registry file they cover every process sharing it, with no
// multiprocess mode. It is a module of its own so that the lazybreaker
// package itself needs nothing beyond the standard library.
package lbprometheus

import (
	"fmt"
	"sort"
	"strings"

	lazybreaker "github.com/lazybreaker/lazybreaker/bindings/go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Collector collects a registry's breakers. It is "unchecked" (Describe
// sends nothing): the breakers, and so the series, come and go.
type Collector struct {
	registry *lazybreaker.Registry
}

// NewCollector collects reg's breakers (nil: the default registry).
func NewCollector(reg *lazybreaker.Registry) *Collector {
	return &Collector{registry: reg}
}

// Describe sends nothing: an unchecked collector.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect reads the registry's figures now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	reg := c.registry
	if reg == nil {
		var err error
		if reg, err = lazybreaker.DefaultRegistry(); err != nil {
			ch <- prometheus.NewInvalidMetric(prometheus.NewInvalidDesc(err), err)
			return
		}
	}
	text, err := reg.Prometheus()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(prometheus.NewInvalidDesc(err), err)
		return
	}
	families, err := new(expfmt.TextParser).TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		err = fmt.Errorf("lbprometheus: the library's text does not parse: %w", err)
		ch <- prometheus.NewInvalidMetric(prometheus.NewInvalidDesc(err), err)
		return
	}
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		collectFamily(families[name], ch)
	}
}

func collectFamily(f *dto.MetricFamily, ch chan<- prometheus.Metric) {
	var kind prometheus.ValueType
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		kind = prometheus.CounterValue
	case dto.MetricType_GAUGE:
		kind = prometheus.GaugeValue
	default:
		kind = prometheus.UntypedValue
	}
	for _, m := range f.GetMetric() {
		labels := make([]string, 0, len(m.GetLabel()))
		values := make([]string, 0, len(m.GetLabel()))
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName())
			values = append(values, l.GetValue())
		}
		var value float64
		switch kind {
		case prometheus.CounterValue:
			value = m.GetCounter().GetValue()
		case prometheus.GaugeValue:
			value = m.GetGauge().GetValue()
		default:
			value = m.GetUntyped().GetValue()
		}
		desc := prometheus.NewDesc(f.GetName(), f.GetHelp(), labels, nil)
		metric, err := prometheus.NewConstMetric(desc, kind, value, values...)
		if err != nil {
			metric = prometheus.NewInvalidMetric(desc, err)
		}
		ch <- metric
	}
}
