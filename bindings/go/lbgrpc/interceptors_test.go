package lbgrpc_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang/protobuf/ptypes"
	lazybreaker "github.com/lazybreaker/lazybreaker/bindings/go"
	"github.com/lazybreaker/lazybreaker/bindings/go/lbgrpc"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	health "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// upstream is a health service over loopback that answers with `code`
// (OK: SERVING), counting the calls it receives.
type upstream struct {
	health.UnimplementedHealthServer
	code  atomic.Int32
	calls atomic.Int32
}

func (u *upstream) answer() error {
	u.calls.Add(1)
	if c := codes.Code(u.code.Load()); c != codes.OK {
		return status.Error(c, "scripted")
	}
	return nil
}

func (u *upstream) Check(context.Context, *health.HealthCheckRequest) (*health.HealthCheckResponse, error) {
	if err := u.answer(); err != nil {
		return nil, err
	}
	return &health.HealthCheckResponse{Status: health.HealthCheckResponse_SERVING}, nil
}

func (u *upstream) Watch(_ *health.HealthCheckRequest, stream health.Health_WatchServer) error {
	if err := u.answer(); err != nil {
		return err
	}
	return stream.Send(&health.HealthCheckResponse{Status: health.HealthCheckResponse_SERVING})
}

func serve(t *testing.T) (*upstream, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{}
	srv := grpc.NewServer()
	health.RegisterHealthServer(srv, u)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return u, ln.Addr().String()
}

func dial(t *testing.T, target string, opts lbgrpc.Options) health.HealthClient {
	conn, err := grpc.Dial(target, grpc.WithInsecure(),
		grpc.WithUnaryInterceptor(lbgrpc.UnaryClientInterceptor(opts)),
		grpc.WithStreamInterceptor(lbgrpc.StreamClientInterceptor(opts)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return health.NewHealthClient(conn)
}

func registry(t *testing.T) *lazybreaker.Registry {
	reg, err := lazybreaker.NewManualClockRegistry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	return reg
}

func TestUnaryFailuresTripAndRejectionsCarryRetryInfo(t *testing.T) {
	for _, code := range []codes.Code{codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted} {
		u, target := serve(t)
		reg := registry(t)
		client := dial(t, target, lbgrpc.Options{Registry: reg,
			Settings: lazybreaker.Settings{FailureThreshold: 2, Timeout: 5 * time.Second}})
		u.code.Store(int32(code))
		for i := 0; i < 2; i++ {
			if _, err := client.Check(context.Background(), &health.HealthCheckRequest{}); status.Code(err) != code {
				t.Fatalf("%v: call %d: %v", code, i, err)
			}
		}
		_, err := client.Check(context.Background(), &health.HealthCheckRequest{})
		st := status.Convert(err)
		if st.Code() != codes.Unavailable || u.calls.Load() != 2 {
			t.Fatalf("%v: while open: %v, upstream saw %d calls (want Unavailable, 2)", code, err, u.calls.Load())
		}
		var retry *errdetails.RetryInfo
		for _, d := range st.Details() {
			if r, ok := d.(*errdetails.RetryInfo); ok {
				retry = r
			}
		}
		if retry == nil {
			t.Fatalf("%v: the rejection has no RetryInfo: %v", code, st.Details())
		}
		if delay, err := ptypes.Duration(retry.GetRetryDelay()); err != nil || delay != 5*time.Second {
			t.Fatalf("%v: the rejection's RetryInfo: %v", code, st.Details())
		}
		cb, err := reg.Lookup("grpc/" + target)
		if err != nil {
			t.Fatalf("the breaker is named grpc/<target>: %v", err)
		}
		if st, _ := cb.State(); st != lazybreaker.StateOpen {
			t.Fatalf("%v: %v", code, st)
		}
	}
}

func TestOtherCodesSucceedAndCancellationIsIgnored(t *testing.T) {
	u, target := serve(t)
	reg := registry(t)
	client := dial(t, target, lbgrpc.Options{Registry: reg, Settings: lazybreaker.Settings{FailureThreshold: 1}})
	for _, code := range []codes.Code{codes.OK, codes.NotFound, codes.InvalidArgument, codes.PermissionDenied, codes.Internal} {
		u.code.Store(int32(code))
		_, _ = client.Check(context.Background(), &health.HealthCheckRequest{})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := client.Check(ctx, &health.HealthCheckRequest{}); status.Code(err) != codes.Canceled {
		t.Fatalf("a canceled call: %v", err)
	}
	cb, _ := reg.Lookup("grpc/" + target)
	c, _ := cb.Counts()
	if c.TotalSuccesses != 5 || c.TotalFailures != 0 || c.TotalExclusions != 1 {
		t.Fatalf("counts %+v: want 5 successes, no failure, 1 ignored", c)
	}
}

func TestStreamsReportWhenTheyEnd(t *testing.T) {
	u, target := serve(t)
	reg := registry(t)
	client := dial(t, target, lbgrpc.Options{Registry: reg,
		Name:     func(method string, _ *grpc.ClientConn) string { return "grpc-stream" + method },
		Settings: lazybreaker.Settings{FailureThreshold: 1}})
	stream, err := client.Watch(context.Background(), &health.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("end of stream: %v", err)
	}
	cb, err := reg.Lookup("grpc-stream/grpc.health.v1.Health/Watch")
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := cb.Counts(); c.TotalSuccesses != 1 {
		t.Fatalf("a stream ending in EOF: %+v", c)
	}
	u.code.Store(int32(codes.Unavailable))
	stream, err = client.Watch(context.Background(), &health.HealthCheckRequest{})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("a failing stream: %v", err)
	}
	if st, _ := cb.State(); st != lazybreaker.StateOpen {
		t.Fatalf("after a stream failed with Unavailable: %v", st)
	}
	calls := u.calls.Load()
	if _, err := client.Watch(context.Background(), &health.HealthCheckRequest{}); status.Code(err) != codes.Unavailable ||
		u.calls.Load() != calls {
		t.Fatalf("while open a stream is not opened: %v", err)
	}
}
