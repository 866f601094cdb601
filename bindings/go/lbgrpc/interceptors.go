// Package lbgrpc puts lazybreaker breakers in front of gRPC calls, as
// client interceptors: one breaker per target (or as Options.Name says),
// the codes Unavailable, DeadlineExceeded and ResourceExhausted failures,
// a cancellation by the caller ignored, any other outcome a success. While
// a breaker is open the call is not sent and fails with
// codes.Unavailable, its status carrying the wait as a RetryInfo detail.
//
//	conn, err := grpc.Dial(target,
//		grpc.WithUnaryInterceptor(lbgrpc.UnaryClientInterceptor(lbgrpc.Options{})),
//		grpc.WithStreamInterceptor(lbgrpc.StreamClientInterceptor(lbgrpc.Options{})))
//
// It is a module of its own so that the lazybreaker package itself needs
// nothing beyond the standard library.
package lbgrpc

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/golang/protobuf/ptypes"
	lazybreaker "github.com/lazybreaker/lazybreaker/bindings/go"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Options configure the interceptors. The zero value is ready.
type Options struct {
	// Registry holds the breakers (nil: the default registry).
	Registry *lazybreaker.Registry
	// Name names a call's breaker (nil: "grpc/" and the connection's target).
	Name func(method string, cc *grpc.ClientConn) string
	// Settings configures each breaker (its Name is set by Name).
	Settings lazybreaker.Settings
}

// breakers finds (and caches) the breaker of each name.
type breakers struct {
	opts  Options
	cache sync.Map // name -> *lazybreaker.CircuitBreaker
}

func (b *breakers) of(method string, cc *grpc.ClientConn) (*lazybreaker.CircuitBreaker, error) {
	var name string
	if b.opts.Name != nil {
		name = b.opts.Name(method, cc)
	} else {
		name = "grpc/" + cc.Target()
	}
	if cb, ok := b.cache.Load(name); ok {
		return cb.(*lazybreaker.CircuitBreaker), nil
	}
	reg := b.opts.Registry
	if reg == nil {
		var err error
		if reg, err = lazybreaker.DefaultRegistry(); err != nil {
			return nil, err
		}
	}
	s := b.opts.Settings
	s.Name = name
	cb, err := reg.GetOrCreate(s)
	if err != nil {
		return nil, err
	}
	actual, _ := b.cache.LoadOrStore(name, cb)
	return actual.(*lazybreaker.CircuitBreaker), nil
}

// admit asks the breaker, turning a rejection into codes.Unavailable.
func (b *breakers) admit(ctx context.Context, method string, cc *grpc.ClientConn) (*lazybreaker.CircuitBreaker, lazybreaker.Ticket, error) {
	cb, err := b.of(method, cc)
	if err != nil {
		return nil, 0, status.Error(codes.Internal, err.Error())
	}
	ticket, err := cb.Acquire()
	if err != nil {
		return nil, 0, unavailable(cb, err)
	}
	return cb, ticket, nil
}

func unavailable(cb *lazybreaker.CircuitBreaker, rejection error) error {
	st := status.New(codes.Unavailable, "lazybreaker: "+cb.Name()+": "+rejection.Error())
	wait, err := cb.RetryAfter()
	if err != nil || wait == lazybreaker.Forever {
		return st.Err()
	}
	if detailed, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: ptypes.DurationProto(wait)}); err == nil {
		st = detailed
	}
	return st.Err()
}

// Outcome classifies a call's error: nil and most codes succeed (the
// server answered), Unavailable, DeadlineExceeded and ResourceExhausted
// fail, a cancellation by the caller (ctx canceled) is ignored.
func Outcome(ctx context.Context, err error) lazybreaker.Outcome {
	if err == nil {
		return lazybreaker.Success
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return lazybreaker.Ignored
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		return lazybreaker.Failure
	case codes.Canceled:
		return lazybreaker.Ignored
	default:
		return lazybreaker.Success
	}
}

// UnaryClientInterceptor guards unary calls.
func UnaryClientInterceptor(opts Options) grpc.UnaryClientInterceptor {
	b := &breakers{opts: opts}
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		cb, ticket, err := b.admit(ctx, method, cc)
		if err != nil {
			return err
		}
		err = invoker(ctx, method, req, reply, cc, callOpts...)
		_ = cb.Done(ticket, Outcome(ctx, err))
		return err
	}
}

// StreamClientInterceptor guards streams: the breaker admits the stream
// when it opens, and hears its outcome when it ends (RecvMsg's io.EOF, or
// an error); a stream its caller abandons reports nothing, and a probe so
// left is re-opened by the breaker's lease.
func StreamClientInterceptor(opts Options) grpc.StreamClientInterceptor {
	b := &breakers{opts: opts}
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
		cb, ticket, err := b.admit(ctx, method, cc)
		if err != nil {
			return nil, err
		}
		stream, err := streamer(ctx, desc, cc, method, callOpts...)
		if err != nil {
			_ = cb.Done(ticket, Outcome(ctx, err))
			return nil, err
		}
		return &guardedStream{ClientStream: stream, ctx: ctx, cb: cb, ticket: ticket, serverStreams: desc.ServerStreams}, nil
	}
}

type guardedStream struct {
	grpc.ClientStream
	ctx           context.Context
	cb            *lazybreaker.CircuitBreaker
	ticket        lazybreaker.Ticket
	serverStreams bool // else the one reply ends the stream
	reported      atomic.Bool
}

func (s *guardedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	ended := err != nil || !s.serverStreams
	if ended && !s.reported.Swap(true) {
		if err == nil || errors.Is(err, io.EOF) {
			_ = s.cb.Done(s.ticket, lazybreaker.Success)
		} else {
			_ = s.cb.Done(s.ticket, Outcome(s.ctx, err))
		}
	}
	return err
}
