// A user's module: it requires the binding as any module would, here
// replaced by the directory of this checkout (no download).
module example.com/lazybreaker-consumer

go 1.19

require github.com/lazybreaker/lazybreaker/bindings/go v1.1.0

replace github.com/lazybreaker/lazybreaker/bindings/go => ../../../bindings/go
