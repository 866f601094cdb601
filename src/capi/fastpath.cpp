// The published quiet path (lazybreaker/fastpath.h): its addresses, its
// stripes and its fold. Every number the header's rules state is tied here
// to the core's and the registry's own, so a change to either that would
// make a binding's quiet path wrong stops the build.
#include "lazybreaker/fastpath.h"

#include <cstddef>

#include "capi/errors.hpp"
#include "capi/validate.hpp"
#include "capi/versioned.hpp"
#include "core/counters.hpp"
#include "core/words.hpp"
#include "registry/handle.hpp"
#include "registry/space.hpp"
#include "registry/thread_stripe.hpp"

using lazybreaker::capi::copy_out;
using lazybreaker::capi::fail;
using lazybreaker::capi::fail_at;
using lazybreaker::capi::FirstVersion;
using lazybreaker::core::Counter;
using lazybreaker::core::Hot;
using lazybreaker::core::OpenPeriod;
using lazybreaker::core::StateWord;
using lazybreaker::core::Ticket;
using lazybreaker::registry::Handle;
using lazybreaker::registry::Space;

namespace {

constexpr uint32_t kIndexBits = Handle::kIndexBits;
constexpr uint32_t kLineWords = sizeof(Hot) / sizeof(uint64_t);
constexpr uint32_t kOpenPeriodWord = offsetof(Hot, open_period) / sizeof(uint64_t);

// The rules' numbers, as the header states them.
static_assert(kIndexBits == 24 && kLineWords == 8 && kOpenPeriodWord == 7 &&
              offsetof(Hot, word) == 0);
static_assert(Space::kChunkSlots == 1u << 10);
static_assert(CB_FASTPATH_MODE_OPEN == StateWord::kOpenMode &&
              CB_FASTPATH_MODE_RUN == StateWord::kClosedRunMode &&
              CB_FASTPATH_MODE_FORCED_OPEN == StateWord::kForcedOpenMode &&
              CB_FASTPATH_MODE_WINDOW == StateWord::kClosedWindowMode &&
              CB_FASTPATH_MODE_QUIET == StateWord::kQuietMode &&
              CB_FASTPATH_CALL_TICKET == Ticket::kCallCode);
static_assert(StateWord::kModeShift == 60 && StateWord::kIncarnationShift == 24 &&
              StateWord::kIncarnationBits == 20 && StateWord::kEpochBits == 24 &&
              StateWord::kFastTop == 0xb0000);
static_assert(OpenPeriod::kUnitsShift == 24 && OpenPeriod::kUnitShift == 20);
static_assert(CB_FASTPATH_ADMITTED == int(Counter::Admitted) &&
              CB_FASTPATH_REJECTED == int(Counter::Rejected) &&
              CB_FASTPATH_SUCCESSES == int(Counter::Successes));
static_assert(sizeof(lazybreaker::core::Cell) == sizeof(uint64_t) &&
              lazybreaker::core::kFoldAt == 0x8000 && lazybreaker::core::kCellFields == 4);
static_assert(sizeof(std::atomic<uint8_t>) == 1 && sizeof(std::atomic<uint64_t>) == 8);
// A call's ticket, quiet or not, is what the header says to make.
static_assert(Ticket::make(0x123456, lazybreaker::core::TicketKind::Call) ==
              (uint64_t(CB_FASTPATH_CALL_TICKET) << 60 | 0x123456));

static_assert(FirstVersion::kFastpath == LB_SIZE_THROUGH(cb_fastpath, fold_at) &&
              FirstVersion::kFastpathCells == LB_SIZE_THROUGH(cb_fastpath_cells, claimed));

int fill_cells(cb_fastpath_cells *out, uint32_t stripe, bool claimed) {
  cb_fastpath_cells v{};
  v.struct_size = out->struct_size;
  v.cells = reinterpret_cast<uint64_t *>(Space::stripe_cells(stripe));
  v.stripe = stripe;
  v.claimed = claimed ? 1 : 0;
  copy_out(out, out->struct_size, v);
  return CB_OK;
}

bool cells_struct_ok(const cb_fastpath_cells *out) {
  return out != nullptr && out->struct_size >= FirstVersion::kFastpathCells &&
         out->struct_size <= lazybreaker::capi::kMaxStructSize;
}

}  // namespace

CB_API int cb_fastpath_describe(cb_fastpath *out) CB_NOEXCEPT {
  if (out == nullptr) return fail_at(CB_EINVAL, "out", "cb_fastpath_describe: out is NULL");
  if (const int st =
          lazybreaker::capi::check_struct_bound(out->struct_size, "cb_fastpath_describe");
      st != CB_OK)
    return st;
  if (out->struct_size < FirstVersion::kFastpath)
    return fail_at(CB_EINVAL, "struct_size",
                   "cb_fastpath_describe: struct_size %zu is below the 1.3 struct's %zu",
                   out->struct_size, FirstVersion::kFastpath);
  if (!Space::ensure())
    return fail(CB_ENOMEM, "cb_fastpath_describe: the breaker space cannot be reserved");
  cb_fastpath v{};
  v.struct_size = out->struct_size;
  v.layout = CB_FASTPATH_LAYOUT;
  v.index_bits = kIndexBits;
  v.lines = reinterpret_cast<const uint64_t *>(Space::lines());
  v.line_words = kLineWords;
  v.open_period_word = kOpenPeriodWord;
  v.lean_rejections = reinterpret_cast<const uint8_t *>(Space::lean_rejection_flags());
  v.chunk_bits = 10;
  v.fold_at = lazybreaker::core::kFoldAt;
  copy_out(out, out->struct_size, v);
  return CB_OK;
}

CB_API int cb_fastpath_thread_cells(cb_fastpath_cells *out) CB_NOEXCEPT {
  if (!cells_struct_ok(out))
    return fail_at(CB_EINVAL, "out",
                   "cb_fastpath_thread_cells: out is NULL, too short or too long");
  if (!Space::ensure())
    return fail(CB_ENOMEM, "cb_fastpath_thread_cells: the breaker space cannot be reserved");
  (void)Space::tally(0);  // takes the thread's stripe if it has none
  const uint32_t s = lazybreaker::registry::detail::t_stripe_plus_one - 1;
  if (s >= Space::exclusive_stripes())
    return fail(CB_EFULL,
                "cb_fastpath_thread_cells: every counter stripe is taken; this thread "
                "counts in the shared totals");
  return fill_cells(out, s, false);
}

CB_API int cb_fastpath_claim_cells(cb_fastpath_cells *out) CB_NOEXCEPT {
  if (!cells_struct_ok(out))
    return fail_at(CB_EINVAL, "out", "cb_fastpath_claim_cells: out is NULL, too short or too long");
  if (!Space::ensure())
    return fail(CB_ENOMEM, "cb_fastpath_claim_cells: the breaker space cannot be reserved");
  const uint32_t s = lazybreaker::registry::claim_detached_stripe(Space::exclusive_stripes());
  if (s == UINT32_MAX)
    return fail(CB_EFULL, "cb_fastpath_claim_cells: every counter stripe is taken");
  return fill_cells(out, s, true);
}

CB_API int cb_fastpath_release_cells(uint32_t stripe) CB_NOEXCEPT {
  if (!lazybreaker::registry::release_detached_stripe(stripe))
    return fail_at(CB_EINVAL, "stripe",
                   "cb_fastpath_release_cells: stripe %u is not one cb_fastpath_claim_cells gave",
                   stripe);
  return CB_OK;
}

CB_API int cb_fastpath_fold(uint32_t stripe, cb_handle h, int counter) CB_NOEXCEPT {
  const bool own = stripe == lazybreaker::registry::detail::t_stripe_plus_one - 1;
  if (stripe >= Space::exclusive_stripes() ||
      !(own || lazybreaker::registry::detached_stripe(stripe)))
    return fail_at(CB_EINVAL, "stripe",
                   "cb_fastpath_fold: stripe %u is neither the calling thread's nor a claimed one",
                   stripe);
  if (counter < 0 || unsigned(counter) >= lazybreaker::core::kCellFields)
    return fail_at(CB_EINVAL, "counter", "cb_fastpath_fold: counter %d is not 0 to %u", counter,
                   lazybreaker::core::kCellFields - 1);
  if (!Handle::well_formed(h) || !Space::counters_writable(Handle::index(h)))
    return fail(CB_EHANDLE, "cb_fastpath_fold: 0x%llx is not a breaker's handle",
                static_cast<unsigned long long>(h));
  const uint32_t index = Handle::index(h);
  const uint16_t value = Space::cell(stripe, index).n[counter].load(std::memory_order_relaxed);
  if ((value & lazybreaker::core::kFoldAt) == 0)
    return fail_at(CB_EINVAL, "counter",
                   "cb_fastpath_fold: counter %d of this cell holds %u, below fold_at", counter,
                   unsigned(value));
  Space::fold_in_stripe(stripe, index, Counter(counter));
  return CB_OK;
}
