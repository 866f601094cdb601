package lbprometheus_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	lazybreaker "github.com/lazybreaker/lazybreaker/bindings/go"
	"github.com/lazybreaker/lazybreaker/bindings/go/lbprometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestTheBreakersJoinTheApplicationsRegistry(t *testing.T) {
	reg, err := lazybreaker.NewManualClockRegistry()
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	cb, err := reg.NewCircuitBreaker(lazybreaker.Settings{Name: "payments", FailureThreshold: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		_, _ = cb.Execute(func() (any, error) { return nil, errors.New("down") })
	}
	_, _ = cb.Execute(func() (any, error) { return nil, nil }) // rejected

	app := prometheus.NewPedanticRegistry()
	requests := prometheus.NewCounter(prometheus.CounterOpts{Name: "app_requests_total", Help: "The app's own."})
	requests.Add(7)
	app.MustRegister(requests, lbprometheus.NewCollector(reg))

	if n, err := testutil.GatherAndCount(app, "lazybreaker_trips_total"); err != nil || n != 1 {
		t.Fatalf("trips series: %d, %v", n, err)
	}
	want := `
# HELP lazybreaker_calls_rejected_total Calls the breaker rejected (failed fast).
# TYPE lazybreaker_calls_rejected_total counter
lazybreaker_calls_rejected_total{breaker="payments"} 1
`
	if err := testutil.GatherAndCompare(app, strings.NewReader(want), "lazybreaker_calls_rejected_total"); err != nil {
		t.Fatal(err)
	}
	families, err := app.Gather()
	if err != nil {
		t.Fatalf("the pedantic registry refuses the collector's metrics: %v", err)
	}
	var open float64 = -1
	for _, f := range families {
		if f.GetName() != "lazybreaker_state" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "state" && l.GetValue() == "open" {
					open = m.GetGauge().GetValue()
				}
			}
		}
	}
	if open != 1 {
		t.Fatalf("lazybreaker_state{state=\"open\"} = %v, want 1", open)
	}

	// served with the app's own metrics on one endpoint
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(app, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	if !strings.Contains(body, "app_requests_total 7") || !strings.Contains(body, `lazybreaker_trips_total{breaker="payments"} 1`) {
		t.Fatalf("/metrics:\n%s", body)
	}
}

func TestAClosedRegistryIsAScrapeError(t *testing.T) {
	reg, _ := lazybreaker.NewManualClockRegistry()
	_ = reg.Close()
	app := prometheus.NewRegistry()
	app.MustRegister(lbprometheus.NewCollector(reg))
	if _, err := app.Gather(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("gathering a closed registry: %v, want an error saying it is closed", err)
	}
}
