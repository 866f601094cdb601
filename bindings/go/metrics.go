package lazybreaker

import (
	"errors"
	"expvar"
	"net/http"
)

// PrometheusHandler serves the registry's Prometheus text (Prometheus) on
// every GET, as a scrape endpoint. For a registry file the text covers
// every process sharing it.
//
//	http.Handle("/metrics", reg.PrometheusHandler())
func (r *Registry) PrometheusHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		text, err := r.Prometheus()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte(text))
	})
}

// PublishExpvar publishes the registry's breakers under name in expvar
// (/debug/vars): an object of breaker name to its state and Counts, read
// at each request. A name expvar already has is ErrInvalidArgument
// (expvar.Publish would panic).
func (r *Registry) PublishExpvar(name string) error {
	if name == "" || expvar.Get(name) != nil {
		return newError("PublishExpvar", statusEInval, "expvar already has a variable named "+name)
	}
	expvar.Publish(name, expvar.Func(r.expvarValue))
	return nil
}

type expvarBreaker struct {
	State  string `json:"state"`
	Counts Counts `json:"counts"`
}

func (r *Registry) expvarValue() any {
	breakers, err := r.Breakers()
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return map[string]any{}
		}
		return map[string]string{"error": err.Error()}
	}
	out := make(map[string]expvarBreaker, len(breakers))
	for _, cb := range breakers {
		state, err := cb.State()
		if err != nil {
			continue // destroyed meanwhile
		}
		counts, err := cb.Counts()
		if err != nil {
			continue
		}
		name := cb.Name()
		if name == "" {
			continue
		}
		out[name] = expvarBreaker{State: state.String(), Counts: counts}
	}
	return out
}
