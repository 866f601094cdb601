// Each thread that calls the library owns one counter stripe for as long as
// it lives, so it bumps its own counter cells with plain stores (no locked
// instruction, no other writer; core/counters.hpp). Threads beyond the
// exclusive stripes count in the breakers' shared totals, atomically. A
// thread that exits gives its stripe back, and the next thread to take it
// goes on counting in its cells.
#pragma once

#include <cstdint>

namespace lazybreaker::registry {

inline constexpr uint32_t kMaxExclusiveStripes = 64, kMinExclusiveStripes = 4;

// How many stripes have ever had an owner: threads take the lowest free
// stripe, so the stripes above this have never been counted in.
uint32_t stripes_used();
// The stripes that have a living owner thread now (bit i: stripe i).
uint64_t stripes_owned();

// Called as a thread takes stripe `s`, before it counts in it: false keeps
// the thread out of the stripe (it counts in the shared stripe). Set while
// shared registries are open: each gives the stripe cells in its file.
// The hook is read after the stripe is taken, and stripes_owned() after
// the hook is set, all sequentially consistent: a registry that sets the
// hook and then reads the owners misses no thread taking a stripe.
using StripeClaimHook = bool (*)(uint32_t s);
void set_stripe_claim_hook(StripeClaimHook hook);

// Stripes owned by no thread (cb_fastpath_claim_cells): a runtime whose
// code moves between threads keeps each to one writer itself. The lowest
// free one of the first `exclusive`, UINT32_MAX if none; it passes the
// claim hook as a thread's would.
uint32_t claim_detached_stripe(uint32_t exclusive);
// Gives back a detached stripe; false if `s` is not one.
bool release_detached_stripe(uint32_t s);
// Whether stripe `s` is a detached one.
bool detached_stripe(uint32_t s);

// In a forked child: no stripe has an owner any more but the calling thread's
// next claim (its parent's threads do not exist there, and the stripes it
// held in shared files are its parent's).
void forget_stripe_owners();

namespace detail {
// Claims one of the first `exclusive` stripes for the calling thread, or
// settles it in the shared stripe `exclusive`. `own_cells` is where the
// claimed stripe's cells begin; the fast paths read it back from
// t_own_cells, which is 0 while the thread has none of its own.
uint32_t claim_stripe(uint32_t exclusive, uintptr_t own_cells, uintptr_t stripe_stride);
extern thread_local constinit uint32_t t_stripe_plus_one __attribute__((tls_model("initial-exec")));
extern thread_local constinit uintptr_t t_own_cells __attribute__((tls_model("initial-exec")));
}  // namespace detail

}  // namespace lazybreaker::registry
