package lazybreaker

import (
	"bufio"
	"encoding/json"
	"errors"
	"math"
	"net"
	"net/http"
	"strconv"
)

// Shed runs next through a breaker, for the server side: while the
// breaker is open it answers at once, without calling next, 503 Service
// Unavailable with Retry-After (whole seconds, rounded up; left out when
// forced open) and an RFC 9457 application/problem+json body, as every
// language's server middleware does (docs/http.md). A response of 500 or
// more, or a panic in next (which goes on panicking), is a failure; any
// other response a success.
//
// breaker is the breaker of every request (*CircuitBreaker), or a
// function choosing one per request (func(*http.Request) *CircuitBreaker),
// or naming one of the default registry (func(*http.Request) string, the
// breaker looked up by that name); a request given no breaker (nil, "", or
// a name no breaker has) goes to next unguarded.
func Shed[B *CircuitBreaker | func(*http.Request) *CircuitBreaker | func(*http.Request) string](
	breaker B, next http.Handler) http.Handler {
	var pick func(*http.Request) *CircuitBreaker
	switch b := any(breaker).(type) {
	case *CircuitBreaker:
		pick = func(*http.Request) *CircuitBreaker { return b }
	case func(*http.Request) *CircuitBreaker:
		pick = b
	case func(*http.Request) string:
		pick = func(r *http.Request) *CircuitBreaker {
			name := b(r)
			if name == "" {
				return nil
			}
			reg, err := DefaultRegistry()
			if err != nil {
				return nil
			}
			cb, err := reg.Lookup(name)
			if err != nil {
				return nil
			}
			return cb
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var cb *CircuitBreaker
		if pick != nil {
			cb = pick(r)
		}
		if cb == nil {
			next.ServeHTTP(w, r)
			return
		}
		ticket, err := cb.admit("Shed")
		if err != nil {
			var rejected *RejectedError
			if errors.As(err, &rejected) {
				writeUnavailable(w, r, rejected)
				return
			}
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		reported := false
		defer func() {
			if !reported {
				_ = cb.Done(ticket, Failure) // next panicked
			}
		}()
		next.ServeHTTP(sw, r)
		reported = true
		if sw.status >= 500 {
			_ = cb.Done(ticket, Failure)
		} else {
			_ = cb.Done(ticket, Success)
		}
	})
}

// writeUnavailable answers 503 with the problem of a rejected call.
func writeUnavailable(w http.ResponseWriter, r *http.Request, rejected *RejectedError) {
	state := rejected.State.String()
	problem := map[string]any{
		"type":       "about:blank",
		"title":      "Service Unavailable",
		"status":     http.StatusServiceUnavailable,
		"instance":   r.URL.Path,
		"circuit":    rejected.Breaker,
		"state":      state,
		"retryAfter": nil,
	}
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	if wait := rejected.RetryAfter(); wait == Forever {
		problem["detail"] = "The circuit '" + rejected.Breaker + "' is forced open until an operator resets it."
	} else {
		seconds := int64(math.Ceil(wait.Seconds()))
		if seconds < 1 {
			seconds = 1
		}
		problem["retryAfter"] = seconds
		problem["detail"] = "The circuit '" + rejected.Breaker + "' is " + state + ": retry after " +
			strconv.FormatInt(seconds, 10) + " s."
		h.Set("Retry-After", strconv.FormatInt(seconds, 10))
	}
	body, _ := json.Marshal(problem)
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(body)
}

// statusWriter records the status next answers with, keeping the
// ResponseWriter's Flusher and Hijacker.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := w.ResponseWriter.(http.Hijacker); ok {
		w.status = http.StatusSwitchingProtocols
		return h.Hijack()
	}
	return nil, nil, errors.New("lazybreaker: the ResponseWriter is not an http.Hijacker")
}

// Unwrap gives the ResponseWriter it wraps (http.ResponseController, Go 1.20).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
