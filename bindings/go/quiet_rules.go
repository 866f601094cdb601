package lazybreaker

// The rules of the published quiet path, layout 1 (lazybreaker/fastpath.h),
// as pure functions of the words they read. quiet.go calls them on every
// quiet call, and the vectors that fastpath.h's own C functions compute
// check them (quiet_vectors_test.go), so this file is where a port that
// drifts from the header is found. No cgo here: the tests call it.

import "sync/atomic"

// quietDecision is what the allow rule says of a call.
type quietDecision uint8

const (
	quietLibrary quietDecision = iota // cb_allow decides
	quietAdmit                        // admitted with the ticket, counted admitted
	quietReject                       // rejected in the state, counted rejected
)

// quietInputs is where the reject rule reads what it needs besides h and
// w, read only for a word of the handle's life in OPEN or FORCED_OPEN, so
// that a CLOSED call reads its state word alone. (Addresses and a function,
// not an interface: a value behind an interface escapes to the heap, an
// allocation per call.)
type quietInputs struct {
	lean       *uint8       // lean_rejections[i >> chunk_bits]
	openPeriod *uint64      // L[open_period_word]
	now        func() int64 // CLOCK_MONOTONIC in ns, or a clock that never runs ahead of it
}

// quietWord: the breaker is the handle's, CLOSED, and its calls change
// nothing shared.
func quietWord(h, w uint64) bool {
	return (h^w)>>24 == 0 && w>>63 == 1
}

// quietLife: the word is of the breaker life the handle names, in any state.
func quietLife(h, w uint64) bool {
	return h>>24 == (0xb0000<<20 | (w>>24)&0xfffff)
}

// quietAllow is the allow rule for handle h whose state word is w. The
// quiet case stays small enough to inline into Acquire.
func quietAllow(h, w uint64, in quietInputs) (quietDecision, Ticket, State) {
	if quietWord(h, w) {
		return quietAdmit, Ticket(h + w), 0
	}
	return quietAllowLoud(h, w, in)
}

// quietAllowLoud is the allow rule for a word that is not quiet.
func quietAllowLoud(h, w uint64, in quietInputs) (quietDecision, Ticket, State) {
	if !quietLife(h, w) {
		return quietLibrary, 0, 0
	}
	switch w >> 60 {
	case modeWindow, modeRun:
		return quietAdmit, Ticket(h + (callTicket<<60 | w&0xffffff)), 0
	case modeForcedOpen:
		if *in.lean != 0 {
			return quietReject, 0, StateForcedOpen
		}
	case modeOpen:
		if *in.lean == 0 {
			break
		}
		if d := quietDeadline(w, atomic.LoadUint64(in.openPeriod)); d != 0 && uint64(in.now()) < d {
			return quietReject, 0, StateOpen
		}
	}
	return quietLibrary, 0, 0
}

// quietDeadline is the OPEN period's cached coarse deadline when the
// period word p is of the epoch of w, else 0 (none known).
func quietDeadline(w, p uint64) uint64 {
	if (p^w)&0xffffff != 0 {
		return 0
	}
	return (p >> 24) << 20
}

// quietDone is the success rule: outcome o of ticket t changes nothing
// when it is a success of a quiet call and w is still that call's word.
func quietDone(h, w uint64, t Ticket, o Outcome) bool {
	return o == Success && quietWord(h, w) && uint64(t) == h+w
}

// quietCount counts one in counter f of a cell: the cell after, and whether
// the counter reached foldAt, so that cb_fastpath_fold must move it before
// it counts again.
func quietCount(cell uint64, f uint, foldAt uint64) (uint64, bool) {
	v := cell + 1<<(16*f)
	return v, (v>>(16*f))&foldAt != 0
}
