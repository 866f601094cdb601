package lazybreaker

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Transport is an http.RoundTripper that puts one breaker per upstream in
// front of Base, by the rules every language's HTTP integration follows
// (docs/http.md): a 5xx response, a connection error and a timeout are
// failures; any other response is a success (a 4xx is the caller's fault,
// not the host's); a request whose context the caller canceled is
// ignored; a 429 or 503 with Retry-After (seconds or an HTTP date) trips
// the breaker for exactly that long. While the breaker is open nothing is
// sent, and RoundTrip returns a *RejectedError (errors.Is ErrOpenState).
//
//	client := &http.Client{Transport: &lazybreaker.Transport{}}
//
// The zero value is ready: http.DefaultTransport, the default registry,
// breakers named by BreakerName and made with the library's defaults.
// Transport caches its breakers; it may be used from any goroutine but not
// changed once in use.
type Transport struct {
	// Base sends the request (nil: http.DefaultTransport).
	Base http.RoundTripper
	// Registry holds the breakers (nil: DefaultRegistry). A registry file
	// (OpenRegistry with Path) shares them with every process and language
	// on the host that names them alike.
	Registry *Registry
	// Name names a request's breaker (nil: BreakerName(req.URL)).
	Name func(*http.Request) string
	// Settings configures each breaker (its Name is set by Name). Every
	// process sharing a breaker must give it the same settings.
	Settings Settings

	breakers upstreams
}

// upstreams is Transport's cache of breakers: a map replaced whole when
// an upstream is added, so that finding a known one is a load and a
// lookup, with no allocation and no write to shared memory.
type upstreams struct {
	mu sync.Mutex // adding
	m  atomic.Pointer[map[upstreamKey]*CircuitBreaker]
}

// upstreamKey is a request's scheme class and URL host (the name is made
// only once per key), or, with Transport.Name, the name it gives.
type upstreamKey struct {
	kind uint8 // keyByName, keyHTTP or keyHTTPS
	s    string
}

const (
	keyByName = iota
	keyHTTP
	keyHTTPS
)

// RoundTrip sends req through its upstream's breaker.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	cb, err := t.breakerFor(req)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	ticket, err := cb.admit("RoundTrip")
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := t.base().RoundTrip(req)
	if err != nil {
		outcome := Failure
		if errors.Is(req.Context().Err(), context.Canceled) {
			outcome = Ignored // the caller gave up: no word on the host
		}
		_ = cb.Done(ticket, outcome)
		return nil, err
	}
	if resp.StatusCode >= 500 {
		_ = cb.Done(ticket, Failure)
	} else {
		_ = cb.Done(ticket, Success)
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if d, ok := RetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			_ = cb.Trip(capOpenDuration(d))
		}
	}
	return resp, nil
}

// Breaker is the breaker RoundTrip uses for req.
func (t *Transport) Breaker(req *http.Request) (*CircuitBreaker, error) { return t.breakerFor(req) }

func (t *Transport) breakerFor(req *http.Request) (*CircuitBreaker, error) {
	var key upstreamKey
	if t.Name != nil {
		key = upstreamKey{keyByName, t.Name(req)}
	} else if defaultPort(req.URL.Scheme) == "443" {
		key = upstreamKey{keyHTTPS, req.URL.Host}
	} else {
		key = upstreamKey{keyHTTP, req.URL.Host}
	}
	if m := t.breakers.m.Load(); m != nil {
		if cb, ok := (*m)[key]; ok {
			return cb, nil
		}
	}
	return t.addUpstream(req, key)
}

func (t *Transport) addUpstream(req *http.Request, key upstreamKey) (*CircuitBreaker, error) {
	t.breakers.mu.Lock()
	defer t.breakers.mu.Unlock()
	old := t.breakers.m.Load()
	if old != nil {
		if cb, ok := (*old)[key]; ok {
			return cb, nil
		}
	}
	reg := t.Registry
	if reg == nil {
		var err error
		if reg, err = DefaultRegistry(); err != nil {
			return nil, err
		}
	}
	s := t.Settings
	if key.kind == keyByName {
		s.Name = key.s
	} else {
		s.Name = BreakerName(req.URL)
	}
	cb, err := reg.GetOrCreate(s)
	if err != nil {
		return nil, err
	}
	m := make(map[upstreamKey]*CircuitBreaker, 1)
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[key] = cb
	t.breakers.m.Store(&m)
	return cb, nil
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// A RoundTripper must close the request body, even on an error.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// RetryAfter reads a Retry-After header's value, delta-seconds or an HTTP
// date (from now): the wait, and false when it is absent, unreadable or
// not in the future.
func RetryAfter(value string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	var d time.Duration
	if seconds, err := strconv.ParseUint(value, 10, 63); err == nil {
		if seconds > uint64(maxOpenDuration/time.Second) {
			return maxOpenDuration, true
		}
		d = time.Duration(seconds) * time.Second
	} else if at, err := http.ParseTime(value); err == nil {
		d = at.Sub(now)
	} else {
		return 0, false
	}
	return d, d > 0
}
