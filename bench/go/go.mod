// The Go benchmark (make bench): the binding beside an empty cgo pair and a
// mutex breaker in gobreaker's shape. The binding comes from this checkout.
module github.com/lazybreaker/lazybreaker/bench/go

go 1.19

require github.com/lazybreaker/lazybreaker/bindings/go v1.1.0

replace github.com/lazybreaker/lazybreaker/bindings/go => ../../bindings/go
