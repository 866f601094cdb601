// Package lbswig is SWIG's Go output for bindings/swig/go.i: the low layer
// of package lazybreaker, one function per C function of the allow-list in
// bindings/swig/lazybreaker.i. lbswig.go and lbswig_wrap.c are generated
// (regenerate with `cmake --build build --target go-swig-update`; the test
// go.swig_output_current fails when they are out of date) and committed, so
// that `go build` of the module needs no SWIG.
//
// A negative status panics with "lazybreaker status N: MESSAGE" (go.i);
// package lazybreaker recovers it into an error value.
package lbswig

// The wrapper (lbswig_wrap.c) and the library, found through pkg-config:
// the installed lazybreaker.pc, or the build tree's (PKG_CONFIG_PATH).

// #cgo pkg-config: lazybreaker
import "C"
