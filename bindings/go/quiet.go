package lazybreaker

// The published quiet path (lazybreaker/fastpath.h, docs/fastpath.md) in Go:
// a CLOSED call admitted, a quiet success reported and an OPEN call far from
// its deadline rejected without a cgo crossing, by reading the breaker's
// state word with sync/atomic and counting in the library's own counter
// cells. Every other case crosses exactly as before (fastpath.go), and no
// transition is made here: this code only reads words and counts. What it
// decides from the words it reads is quiet_rules.go's, checked against the
// header's own decisions (quiet_vectors_test.go).
//
// Goroutines move between threads, so the counts go to stripes claimed for
// this package (cb_fastpath_claim_cells), one per P. A goroutine counts in
// its P's stripe while pinned to the P (runtime.procPin, as sync.Pool does),
// so each stripe has one writer at a time. A counter that fills is folded
// by cb_fastpath_fold, a crossing that cannot be made while pinned: the
// folding goroutine marks the stripe busy first, and while it is busy the
// P's other goroutines cross instead of counting in it.

/*
#include <lazybreaker/fastpath.h>

static int lb_go_describe(cb_fastpath *fp) {
  fp->struct_size = sizeof *fp;
  return cb_fastpath_describe(fp);
}

static int lb_go_claim(cb_fastpath_cells *c) {
  c->struct_size = sizeof *c;
  return cb_fastpath_claim_cells(c);
}
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

const (
	quietLayout      = 1
	quietIndexMask   = 1<<24 - 1
	quietLineBytes   = 64
	quietOpenPeriod  = 7 // the word of the OPEN period's deadline in a line
	quietChunkBits   = 10
	quietFoldAt      = 0x8000
	modeOpen         = 1
	modeRun          = 3
	modeForcedOpen   = 4
	modeWindow       = 7
	callTicket       = 0xc
	counterAdmitted  = 0
	counterRejected  = 1
	counterSuccesses = 2
)

type quietStripe struct {
	cells unsafe.Pointer // slot i's cell at cells + 8i
	id    uint32
	busy  atomic.Uint32 // a fold of this stripe is crossing
	_     [40]byte      // a line each: Ps do not share one
}

type quietPath struct {
	lines   unsafe.Pointer
	lean    unsafe.Pointer
	stripes []quietStripe
}

var (
	quietOnce sync.Once
	quiet     *quietPath // nil: the library publishes no layout this code knows
)

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// quietSetUp describes the published layout and claims a stripe per P; a
// library of another layout, or one without stripes to spare, leaves the
// quiet path off (every call crosses, which is always correct).
func quietSetUp() {
	var fp C.cb_fastpath
	if C.lb_go_describe(&fp) != statusOK || fp.layout != quietLayout || fp.index_bits != 24 ||
		fp.line_words != 8 || fp.open_period_word != 7 || fp.chunk_bits != quietChunkBits ||
		fp.fold_at != quietFoldAt {
		return
	}
	q := &quietPath{lines: unsafe.Pointer(fp.lines), lean: unsafe.Pointer(fp.lean_rejections)}
	q.stripes = make([]quietStripe, runtime.GOMAXPROCS(0))
	for i := range q.stripes {
		var c C.cb_fastpath_cells
		if C.lb_go_claim(&c) != statusOK {
			q.stripes = q.stripes[:i] // the Ps beyond cross
			break
		}
		q.stripes[i].cells = unsafe.Pointer(c.cells)
		q.stripes[i].id = uint32(c.stripe)
	}
	quiet = q
}

// line is h's hot line.
func (q *quietPath) line(h uint64) *[8]uint64 {
	return (*[8]uint64)(unsafe.Add(q.lines, uintptr(h&quietIndexMask)*quietLineBytes))
}

// inputs is where the reject rule reads for h, whose hot line is line.
func (q *quietPath) inputs(h uint64, line *[8]uint64) quietInputs {
	return quietInputs{
		lean:       (*uint8)(unsafe.Add(q.lean, uintptr(h&quietIndexMask)>>quietChunkBits)),
		openPeriod: &line[quietOpenPeriod],
		now:        nanotime, // CLOCK_MONOTONIC on Linux
	}
}

// count counts counter f of the breaker h in the calling P's stripe; false
// says it did not (no stripe, or a fold of it crossing), and the caller
// crosses instead.
func (q *quietPath) count(h uint64, f uint) bool {
	p := procPin()
	if p >= len(q.stripes) || q.stripes[p].busy.Load() != 0 {
		procUnpin()
		return false
	}
	s := &q.stripes[p]
	cell := (*uint64)(unsafe.Add(s.cells, uintptr(h&quietIndexMask)*8))
	v, fold := quietCount(atomic.LoadUint64(cell), f, quietFoldAt)
	if !fold {
		atomic.StoreUint64(cell, v)
		procUnpin()
		return true
	}
	s.busy.Store(1)
	atomic.StoreUint64(cell, v)
	procUnpin()
	C.cb_fastpath_fold(C.uint32_t(s.id), C.cb_handle(h), C.int(f))
	s.busy.Store(0)
	return true
}

// admit is cb_allow's quiet cases: ok says it answered (ticket, or a
// rejection in state st when rejected).
func (q *quietPath) admit(h uint64) (t Ticket, rejected bool, st State, ok bool) {
	line := q.line(h)
	switch d, t, st := quietAllow(h, atomic.LoadUint64(&line[0]), q.inputs(h, line)); d {
	case quietAdmit:
		return t, false, 0, q.count(h, counterAdmitted)
	case quietReject:
		return 0, true, st, q.count(h, counterRejected)
	}
	return 0, false, 0, false
}

// done is cb_done's quiet case: a success of a quiet call with nothing
// moved since.
func (q *quietPath) done(h uint64, t Ticket, o Outcome) bool {
	return quietDone(h, atomic.LoadUint64(&q.line(h)[0]), t, o) && q.count(h, counterSuccesses)
}

// quietOn is the quiet path once set up, nil if off.
func quietOn() *quietPath {
	quietOnce.Do(quietSetUp)
	return quiet
}
