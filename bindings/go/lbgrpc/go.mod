module github.com/lazybreaker/lazybreaker/bindings/go/lbgrpc

go 1.19

require (
	github.com/golang/protobuf v1.3.5
	github.com/lazybreaker/lazybreaker/bindings/go v1.4.0
	google.golang.org/genproto v0.0.0-20200413115906-b5235f65be36
	google.golang.org/grpc v1.33.3
)

replace github.com/lazybreaker/lazybreaker/bindings/go => ../
