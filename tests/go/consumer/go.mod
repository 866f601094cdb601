// A user's module: it requires the binding as any module would, here
// replaced by the directory of this checkout (no download; a replaced
// module's version is not used, so v0.0.0 names none).
module example.com/lazybreaker-consumer

go 1.19

require github.com/lazybreaker/lazybreaker/bindings/go v0.0.0

replace github.com/lazybreaker/lazybreaker/bindings/go => ../../../bindings/go
