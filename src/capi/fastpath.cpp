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
#include "registry/fast_path.hpp"
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
constexpr uint32_t kChunkBits = uint32_t(__builtin_ctz(Space::kChunkSlots));
static_assert(Space::kChunkSlots == 1u << kChunkBits && offsetof(Hot, word) == 0);

// Every number of the header's rules (layout 1) is the library's own.
static_assert(CB_FASTPATH_INDEX_BITS == kIndexBits &&
              CB_FASTPATH_INDEX_MASK == Handle::kIndexMask &&
              CB_FASTPATH_LINE_WORDS == kLineWords &&
              CB_FASTPATH_OPEN_PERIOD_WORD == kOpenPeriodWord &&
              CB_FASTPATH_CHUNK_BITS == kChunkBits);
static_assert(CB_FASTPATH_MODE_SHIFT == StateWord::kModeShift &&
              CB_FASTPATH_MODE_SHIFT == Ticket::kKindShift &&
              CB_FASTPATH_LIFE_SHIFT == StateWord::kIncarnationShift &&
              CB_FASTPATH_LIFE_TAG == StateWord::kFastTop &&
              CB_FASTPATH_LIFE_BITS == StateWord::kIncarnationBits &&
              CB_FASTPATH_LIFE_MASK == StateWord::kIncarnationMask &&
              CB_FASTPATH_PERIOD_MASK == StateWord::kEpochMask &&
              uint64_t(CB_FASTPATH_LIFE_TAG) << CB_FASTPATH_LIFE_BITS << CB_FASTPATH_LIFE_SHIFT ==
                  Handle::kTop);
static_assert(CB_FASTPATH_DEADLINE_SHIFT == OpenPeriod::kUnitsShift &&
              CB_FASTPATH_DEADLINE_UNIT_SHIFT == OpenPeriod::kUnitShift);
static_assert(CB_FASTPATH_MODE_OPEN == StateWord::kOpenMode &&
              CB_FASTPATH_MODE_RUN == StateWord::kClosedRunMode &&
              CB_FASTPATH_MODE_FORCED_OPEN == StateWord::kForcedOpenMode &&
              CB_FASTPATH_MODE_WINDOW == StateWord::kClosedWindowMode &&
              CB_FASTPATH_MODE_QUIET == StateWord::kQuietMode &&
              CB_FASTPATH_CALL_TICKET == Ticket::kCallCode);
static_assert(CB_FASTPATH_ADMITTED == int(Counter::Admitted) &&
              CB_FASTPATH_REJECTED == int(Counter::Rejected) &&
              CB_FASTPATH_SUCCESSES == int(Counter::Successes));
static_assert(sizeof(lazybreaker::core::Cell) == sizeof(uint64_t) &&
              lazybreaker::core::kCellFields == 4 &&
              CB_FASTPATH_COUNTER_BITS == 64 / lazybreaker::core::kCellFields &&
              CB_FASTPATH_FOLD_AT == lazybreaker::core::kFoldAt);
static_assert(sizeof(std::atomic<uint8_t>) == 1 && sizeof(std::atomic<uint64_t>) == 8);
// A call's ticket, quiet or not, is what the header says to make.
static_assert(Ticket::make(0x123456, lazybreaker::core::TicketKind::Call) ==
              (uint64_t(CB_FASTPATH_CALL_TICKET) << 60 | 0x123456));

// The header's rules (constexpr in C++) decide as the library does, over
// every mode, the lives either side of a handle's and a made-up handle.
constexpr bool rules_agree(uint64_t h, uint64_t w) {
  using lazybreaker::registry::FastPath;
  uint64_t ticket = 0;
  const bool quiet = Handle::quiet_in(h, w);
  const bool untimed = !quiet && FastPath::may_admit_untimed(w) && Handle::names_life(h, w);
  const uint64_t expected =
      quiet ? Handle::seal(h, w)
      : untimed
          ? Handle::seal(h, Ticket::make(StateWord::epoch(w), lazybreaker::core::TicketKind::Call))
          : 0;
  const bool admits = cb_fastpath_admits(h, w, &ticket) != 0;
  return cb_fastpath_is_quiet(h, w) == quiet &&
         (cb_fastpath_of_life(h, w) != 0) == Handle::names_life(h, w) &&
         admits == (quiet || untimed) && (!admits || ticket == expected) &&
         cb_fastpath_slot(h) == Handle::index(h) &&
         (cb_fastpath_decide_done(h, w, Handle::seal(h, w), CB_SUCCESS) == CB_FASTPATH_SUCCESS) ==
             quiet &&
         (cb_fastpath_rejects(h, w, 0, 1, 0) != 0) ==
             (Handle::names_life(h, w) && StateWord::mode(w) == StateWord::kForcedOpenMode) &&
         (cb_fastpath_needs_clock(h, w, 1) != 0) ==
             (Handle::names_life(h, w) && StateWord::mode(w) == StateWord::kOpenMode) &&
         cb_fastpath_rejects(h, w, 0, 0, 0) == 0 && cb_fastpath_needs_clock(h, w, 0) == 0;
}
constexpr bool rules_agree_in_every_mode(uint32_t life, uint32_t epoch, uint32_t aux) {
  for (uint64_t mode = 0; mode < 16; mode++) {
    const uint64_t w = mode << StateWord::kModeShift | uint64_t(aux) << StateWord::kAuxShift |
                       uint64_t(life) << StateWord::kIncarnationShift | epoch;
    const uint64_t made_up = (w & ~Handle::kIndexMask) | 9;
    if (!rules_agree(Handle::make(life, 9), w) || !rules_agree(Handle::make(life + 1, 9), w) ||
        !rules_agree(Handle::make(life - 1, 9), w) || !rules_agree(made_up, w) ||
        !rules_agree(made_up & ~(1ull << 63), w))
      return false;
  }
  return true;
}
static_assert(rules_agree_in_every_mode(0, 0, 0) && rules_agree_in_every_mode(7, 0xffffff, 0) &&
              rules_agree_in_every_mode(0xfffff, 1, 3) &&
              rules_agree_in_every_mode(0x12345, 0xabcdef, 0x8001));
// The OPEN period word: the header's deadline is the core's cheap deadline.
static_assert(cb_fastpath_deadline(StateWord::pack(7, 3, 0, lazybreaker::core::State::Open),
                                   OpenPeriod::pack(3, 30'000'000'000ull)) ==
                  OpenPeriod::cheap_deadline(OpenPeriod::pack(3, 30'000'000'000ull), 3) &&
              cb_fastpath_deadline(StateWord::pack(7, 4, 0, lazybreaker::core::State::Open),
                                   OpenPeriod::pack(3, 30'000'000'000ull)) == 0);
// Counting: the header's cell is the core's four 16-bit fields, folding
// when the field reaches kFoldAt (core::bump_exclusive).
constexpr bool counts_as_the_core(uint16_t field, int f) {
  int fold = 0;
  const unsigned shift = CB_FASTPATH_COUNTER_BITS * unsigned(f);
  const uint64_t v =
      cb_fastpath_count_cell(uint64_t(field) << shift, f, CB_FASTPATH_FOLD_AT, &fold);
  const uint16_t bumped = uint16_t(field + 1);
  return v == uint64_t(bumped) << shift &&
         (fold != 0) == ((bumped & lazybreaker::core::kFoldAt) != 0);
}
static_assert(counts_as_the_core(0, 0) && counts_as_the_core(0x7fff, 1) &&
              counts_as_the_core(0x8000, 2) && counts_as_the_core(0x7ffe, 2));

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
  v.chunk_bits = kChunkBits;
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
