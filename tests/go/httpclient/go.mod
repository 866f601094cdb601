// The Go client of tests/cross_language/http/one_upstream.py, a module of
// its own requiring the binding as a user's would (replaced by this
// checkout's directory).
module example.com/lazybreaker-httpclient

go 1.19

require github.com/lazybreaker/lazybreaker/bindings/go v0.0.0

replace github.com/lazybreaker/lazybreaker/bindings/go => ../../../bindings/go
