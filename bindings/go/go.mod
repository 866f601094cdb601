module github.com/lazybreaker/lazybreaker/bindings/go

go 1.19
