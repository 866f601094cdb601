// Package lbswig is SWIG's Go output for bindings/swig/go.i: the low layer
// of package lazybreaker, one function per C function of the allow-list in
// bindings/swig/lazybreaker.i. lbswig.go and lbswig_wrap.c are generated
// (regenerate with `cmake --build build --target go-swig-update`; the test
// go.swig_output_current fails when they are out of date) and committed, so
// that `go build` of the module needs no SWIG.
//
// Nothing here panics on a status (go.i): a wrapper returns what its C call
// did. Package lazybreaker uses the structs only (cb_config); its calls
// into the library are cgo of its own (cold.go, fastpath.go).
package lbswig

// The wrapper (lbswig_wrap.c) and the library, found through pkg-config:
// the installed lazybreaker.pc, or the build tree's (PKG_CONFIG_PATH).

// #cgo pkg-config: lazybreaker
import "C"
