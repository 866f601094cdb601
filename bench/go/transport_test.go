package gobench

// The HTTP Transport's added cost: a GET through http.Client over loopback
// (keep-alive) with the bare transport and with lazybreaker.Transport
// around it, and RoundTrip alone over a transport that answers at once
// (no network), bare and wrapped, which is the Transport's own cost and
// allocations.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	lazybreaker "github.com/lazybreaker/lazybreaker/bindings/go"
)

type answerAtOnce struct{ resp http.Response }

func (a *answerAtOnce) RoundTrip(*http.Request) (*http.Response, error) { return &a.resp, nil }

func BenchmarkTransport(b *testing.B) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	defer server.Close()
	reg, err := lazybreaker.OpenRegistry(lazybreaker.RegistryOptions{Capacity: 16})
	if err != nil {
		b.Fatal(err)
	}
	defer reg.Close()
	base := &http.Transport{MaxIdleConnsPerHost: 4}
	defer base.CloseIdleConnections()
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
	}{{"loopback/bare", base}, {"loopback/lazybreaker", &lazybreaker.Transport{Base: base, Registry: reg}}} {
		client := &http.Client{Transport: c.rt}
		b.Run(c.name, func(b *testing.B) {
			run(b, false, func() error {
				resp, err := client.Get(server.URL)
				if err != nil {
					return err
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				return resp.Body.Close()
			})
		})
	}
	stub := &answerAtOnce{resp: http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(""))}}
	req, _ := http.NewRequest(http.MethodGet, "http://upstream.example:8080/", nil)
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
	}{{"roundtrip/bare", stub}, {"roundtrip/lazybreaker", &lazybreaker.Transport{Base: stub, Registry: reg}}} {
		rt := c.rt
		b.Run(c.name, func(b *testing.B) {
			run(b, false, func() error { _, err := rt.RoundTrip(req); return err })
		})
	}
}
