package lazybreaker_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazybreaker/lazybreaker/bindings/go"
)

func TestBreakerNameFollowsTheConvention(t *testing.T) {
	for raw, want := range map[string]string{
		"http://Example.COM/x":           "http/example.com:80",
		"https://example.com":            "http/example.com:443",
		"https://example.com:8443/a?b=c": "http/example.com:8443",
		"http://[::1]:9000/":             "http/[::1]:9000",
		"https://[2001:DB8::1]/":         "http/[2001:db8::1]:443",
		"http://[2001:DB8:0:0::1]:8443/": "http/[2001:db8::1]:8443",
		"http://127.0.0.1/":              "http/127.0.0.1:80",
		"http://bücher.example/":         "http/xn--bcher-kva.example:80",
		"https://MÜNCHEN.de/":            "http/xn--mnchen-3ya.de:443",
		"http://例え.テスト/":                 "http/xn--r8jz45g.xn--zckzah:80",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := lazybreaker.BreakerName(u); got != want {
			t.Errorf("BreakerName(%s) = %q, want %q", raw, got, want)
		}
	}
}

func TestRetryAfterReadsSecondsAndDates(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	for value, want := range map[string]time.Duration{
		"20": 20 * time.Second, " 7 ": 7 * time.Second,
		"Mon, 07 Dec 2026 10:00:30 GMT": 30 * time.Second,
	} {
		if d, ok := lazybreaker.RetryAfter(value, now); !ok || d != want {
			t.Errorf("RetryAfter(%q) = %v, %v; want %v", value, d, ok, want)
		}
	}
	for _, value := range []string{"", "0", "-5", "soon", "Mon, 07 Dec 2026 09:59:00 GMT"} {
		if d, ok := lazybreaker.RetryAfter(value, now); ok {
			t.Errorf("RetryAfter(%q) = %v, want none", value, d)
		}
	}
}

// upstream answers each request with the next status of its script
// (headers from the header script), counting what it receives.
type upstream struct {
	*httptest.Server
	calls  atomic.Int32
	status atomic.Int32
	header atomic.Value // http.Header
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.status.Store(http.StatusOK)
	u.header.Store(http.Header{})
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.calls.Add(1)
		for k, v := range u.header.Load().(http.Header) {
			w.Header()[k] = v
		}
		w.WriteHeader(int(u.status.Load()))
	}))
	t.Cleanup(u.Close)
	return u
}

func newClient(t *testing.T, s lazybreaker.Settings) (*http.Client, *lazybreaker.Transport, *lazybreaker.Registry) {
	reg, err := lazybreaker.NewManualClockRegistry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	tr := &lazybreaker.Transport{Registry: reg, Settings: s}
	return &http.Client{Transport: tr}, tr, reg
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

func TestTransportFailsOn5xxAndRejectsWithoutSending(t *testing.T) {
	up := newUpstream(t)
	c, tr, reg := newClient(t, lazybreaker.Settings{FailureThreshold: 2, Timeout: 10 * time.Second})
	up.status.Store(http.StatusInternalServerError)
	for i := 0; i < 2; i++ {
		if resp, err := get(t, c, up.URL); err != nil || resp.StatusCode != 500 {
			t.Fatalf("call %d: %v %v", i, resp, err)
		}
	}
	_, err := get(t, c, up.URL+"/again")
	var rejected *lazybreaker.RejectedError
	if !errors.As(err, &rejected) || !errors.Is(err, lazybreaker.ErrOpenState) {
		t.Fatalf("the third call: %v, want a *RejectedError", err)
	}
	if got := up.calls.Load(); got != 2 {
		t.Fatalf("the upstream got %d requests, want 2 (nothing sent while open)", got)
	}
	u, _ := url.Parse(up.URL)
	if rejected.Breaker != lazybreaker.BreakerName(u) || rejected.RetryAfter() != 10*time.Second {
		t.Fatalf("rejected by %q, retry after %v", rejected.Breaker, rejected.RetryAfter())
	}
	// the probe after the open period closes it
	up.status.Store(http.StatusOK)
	if err := reg.Advance(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if resp, err := get(t, c, up.URL); err != nil || resp.StatusCode != 200 {
		t.Fatalf("probe: %v %v", resp, err)
	}
	cb, _ := tr.Breaker(httptest.NewRequest("GET", up.URL, nil))
	if st, _ := cb.State(); st != lazybreaker.StateClosed {
		t.Fatalf("after the probe: %v", st)
	}
}

func TestTransportCounts4xxAsSuccess(t *testing.T) {
	up := newUpstream(t)
	c, tr, _ := newClient(t, lazybreaker.Settings{FailureThreshold: 1})
	up.status.Store(http.StatusNotFound)
	for i := 0; i < 3; i++ {
		if resp, err := get(t, c, up.URL); err != nil || resp.StatusCode != 404 {
			t.Fatalf("call %d: %v %v", i, resp, err)
		}
	}
	cb, _ := tr.Breaker(httptest.NewRequest("GET", up.URL, nil))
	if n, _ := cb.Counts(); n.TotalSuccesses != 3 || n.TotalFailures != 0 {
		t.Fatalf("counts %+v", n)
	}
}

func TestTransportFailsOnConnectionErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	ln.Close() // nobody listens there now
	c, _, _ := newClient(t, lazybreaker.Settings{FailureThreshold: 1})
	if _, err := get(t, c, addr); err == nil || errors.Is(err, lazybreaker.ErrOpenState) {
		t.Fatalf("first call: %v, want a connection error", err)
	}
	if _, err := get(t, c, addr); !errors.Is(err, lazybreaker.ErrOpenState) {
		t.Fatalf("second call: %v, want ErrOpenState", err)
	}
}

func TestTransportFailsOnTimeoutAndIgnoresCancellation(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	c, tr, _ := newClient(t, lazybreaker.Settings{FailureThreshold: 5})
	cb, _ := tr.Breaker(httptest.NewRequest("GET", slow.URL, nil))

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", slow.URL, nil)
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := c.Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled call: %v", err)
	}
	if n, _ := cb.Counts(); n.TotalExclusions != 1 || n.TotalFailures != 0 {
		t.Fatalf("a cancellation must be ignored: %+v", n)
	}

	ctx, stop := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer stop()
	req, _ = http.NewRequestWithContext(ctx, "GET", slow.URL, nil)
	if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timed-out call: %v", err)
	}
	if n, _ := cb.Counts(); n.TotalFailures != 1 {
		t.Fatalf("a timeout must fail: %+v", n)
	}
}

func TestTransportTripsFor429And503RetryAfter(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		up := newUpstream(t)
		c, tr, reg := newClient(t, lazybreaker.Settings{FailureThreshold: 100})
		up.status.Store(int32(status))
		up.header.Store(http.Header{"Retry-After": {"20"}})
		if resp, err := get(t, c, up.URL); err != nil || resp.StatusCode != status {
			t.Fatalf("%d: %v %v", status, resp, err)
		}
		cb, _ := tr.Breaker(httptest.NewRequest("GET", up.URL, nil))
		if st, _ := cb.State(); st != lazybreaker.StateOpen {
			t.Fatalf("%d with Retry-After: state %v, want open", status, st)
		}
		if d, _ := cb.RetryAfter(); d != 20*time.Second {
			t.Fatalf("%d: open for %v, want exactly 20s", status, d)
		}
		_ = reg.Advance(20 * time.Second)
		up.status.Store(http.StatusOK)
		if resp, err := get(t, c, up.URL); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%d: the call after Retry-After: %v %v", status, resp, err)
		}
	}
	// without Retry-After a 429 is a success and trips nothing
	up := newUpstream(t)
	c, tr, _ := newClient(t, lazybreaker.Settings{FailureThreshold: 1})
	up.status.Store(http.StatusTooManyRequests)
	get(t, c, up.URL)
	cb, _ := tr.Breaker(httptest.NewRequest("GET", up.URL, nil))
	if st, _ := cb.State(); st != lazybreaker.StateClosed {
		t.Fatalf("429 without Retry-After: %v", st)
	}
}

func TestTransportCustomNameAndSettingsConflict(t *testing.T) {
	up := newUpstream(t)
	reg, _ := lazybreaker.NewManualClockRegistry()
	defer reg.Close()
	tr := &lazybreaker.Transport{Registry: reg, Name: func(*http.Request) string { return "upstream" }}
	if _, err := get(t, &http.Client{Transport: tr}, up.URL); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Lookup("upstream"); err != nil {
		t.Fatalf("the breaker named by Name: %v", err)
	}
	other := &lazybreaker.Transport{Registry: reg, Name: tr.Name, Settings: lazybreaker.Settings{FailureThreshold: 9}}
	if _, err := get(t, &http.Client{Transport: other}, up.URL); !errors.Is(err, lazybreaker.ErrNameTaken) {
		t.Fatalf("other settings for one breaker: %v, want ErrNameTaken", err)
	}
}

func TestShedAnswers503ProblemWhileOpen(t *testing.T) {
	reg, _ := lazybreaker.NewManualClockRegistry()
	defer reg.Close()
	cb, _ := reg.NewCircuitBreaker(lazybreaker.Settings{Name: "checkout", FailureThreshold: 1, Timeout: 1500 * time.Millisecond})
	var calls atomic.Int32
	app := lazybreaker.Shed(cb, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	rec := httptest.NewRecorder()
	app.ServeHTTP(rec, httptest.NewRequest("GET", "/pay", nil))
	if rec.Code != 502 {
		t.Fatalf("first: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	app.ServeHTTP(rec, httptest.NewRequest("GET", "/pay", nil))
	if rec.Code != 503 || calls.Load() != 1 {
		t.Fatalf("while open: %d, handler called %d times", rec.Code, calls.Load())
	}
	if rec.Header().Get("Retry-After") != "2" || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("headers %v", rec.Header())
	}
	var problem map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &problem); err != nil {
		t.Fatal(err)
	}
	if problem["status"] != 503.0 || problem["circuit"] != "checkout" || problem["state"] != "open" ||
		problem["retryAfter"] != 2.0 || problem["instance"] != "/pay" || problem["title"] != "Service Unavailable" {
		t.Fatalf("problem %v", problem)
	}
	// forced open: no Retry-After
	_ = cb.ForceOpen()
	rec = httptest.NewRecorder()
	app.ServeHTTP(rec, httptest.NewRequest("GET", "/pay", nil))
	if rec.Code != 503 || rec.Header().Get("Retry-After") != "" || !strings.Contains(rec.Body.String(), "forced open") {
		t.Fatalf("forced open: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}

func TestShedCountsPanicsAndPicksByName(t *testing.T) {
	def, _ := lazybreaker.DefaultRegistry()
	cb, err := def.GetOrCreate(lazybreaker.Settings{Name: "go-test/shed-by-name", FailureThreshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Reset()
	app := lazybreaker.Shed(func(r *http.Request) string {
		if r.URL.Path == "/free" {
			return ""
		}
		return "go-test/shed-by-name"
	}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") }))
	func() {
		defer func() { _ = recover() }()
		app.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
	}()
	if st, _ := cb.State(); st != lazybreaker.StateOpen {
		t.Fatalf("a panic must count as a failure: %v", st)
	}
	rec := httptest.NewRecorder()
	app.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != 503 {
		t.Fatalf("by name, while open: %d", rec.Code)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("an unguarded request reaches the handler")
			}
		}()
		app.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/free", nil))
	}()
}

func TestPrometheusHandlerAndExpvar(t *testing.T) {
	reg, _ := lazybreaker.NewManualClockRegistry()
	defer reg.Close()
	cb, _ := reg.NewCircuitBreaker(lazybreaker.Settings{Name: "scraped", FailureThreshold: 1})
	_ = cb.ForceOpen()
	rec := httptest.NewRecorder()
	reg.PrometheusHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") ||
		!strings.Contains(rec.Body.String(), `breaker="scraped"`) {
		t.Fatalf("scrape: %d %v\n%s", rec.Code, rec.Header(), rec.Body)
	}
	rec = httptest.NewRecorder()
	reg.PrometheusHandler().ServeHTTP(rec, httptest.NewRequest("POST", "/metrics", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", rec.Code)
	}
	if err := reg.PublishExpvar("lazybreaker_test"); err != nil {
		t.Fatal(err)
	}
	if err := reg.PublishExpvar("lazybreaker_test"); !errors.Is(err, lazybreaker.ErrInvalidArgument) {
		t.Fatalf("a second publication under one name: %v", err)
	}
	rec = httptest.NewRecorder()
	http.DefaultServeMux.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/vars", nil))
	var vars map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &vars); err != nil {
		t.Fatal(err)
	}
	var breakers map[string]struct {
		State string `json:"state"`
	}
	if err := json.Unmarshal(vars["lazybreaker_test"], &breakers); err != nil || breakers["scraped"].State != "forced_open" {
		t.Fatalf("expvar: %s (%v)", vars["lazybreaker_test"], err)
	}
}

func TestWatchEventsDeliversOutsideLocks(t *testing.T) {
	reg, _ := lazybreaker.NewManualClockRegistry()
	defer reg.Close()
	cb, _ := reg.NewCircuitBreaker(lazybreaker.Settings{Name: "watched", FailureThreshold: 1})
	ctx, cancel := context.WithCancel(context.Background())
	seen := make(chan lazybreaker.Event, 8)
	done := make(chan error)
	go func() {
		done <- reg.WatchEvents(ctx, time.Millisecond, func(e lazybreaker.Event) {
			_, _ = cb.State() // calling the breaker from the callback cannot deadlock
			seen <- e
		})
	}()
	t1, _ := cb.Acquire()
	_ = cb.Done(t1, lazybreaker.Failure)
	e := <-seen
	if e.Breaker != "watched" || e.From != lazybreaker.StateClosed || e.To != lazybreaker.StateOpen {
		t.Fatalf("event %v", e)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("WatchEvents returned %v", err)
	}
	if err := reg.WatchEvents(context.Background(), 0, func(lazybreaker.Event) {}); !errors.Is(err, lazybreaker.ErrInvalidArgument) {
		t.Fatalf("every 0: %v", err)
	}
}
