module github.com/lazybreaker/lazybreaker/bindings/go/lbprometheus

go 1.19

require (
	github.com/lazybreaker/lazybreaker/bindings/go v1.4.0
	github.com/prometheus/client_golang v1.14.0
	github.com/prometheus/client_model v0.3.0
	github.com/prometheus/common v0.39.0
)

replace github.com/lazybreaker/lazybreaker/bindings/go => ../
