// Where the core and the C ABI meet, checked at compile time in one place:
// the public enum values against the core's, and each public limit against
// the bit widths and sizes the core and the registry rely on. A change on
// either side that breaks a tie stops the build here. (The defaults are
// tied by construction: both take them from lists.h's CB_CONFIG_FIELDS.)
#include <string_view>

#include "core/breaker.hpp"
#include "core/events.hpp"
#include "core/window.hpp"
#include "lazybreaker/lazybreaker.h"
#include "registry/registry.hpp"
#include "registry/space.hpp"

namespace lazybreaker::capi {
namespace {

using core::Outcome;
using core::Policy;
using core::ProbeLedger;
using core::Reason;
using core::StateWord;

constexpr bool same(int public_value, Outcome o) { return public_value == int(o); }
constexpr bool same(int public_value, Policy p) { return public_value == int(p); }
constexpr bool same(int public_value, Reason r) { return public_value == int(r); }

static_assert(same(CB_SUCCESS, Outcome::Success) && same(CB_FAILURE, Outcome::Failure) &&
              same(CB_IGNORED, Outcome::Ignored));
// lists.h bounds the policy field by number (it holds no declarations).
#define LB_POLICY_BOUNDS(field, type, since, unit, bounds, lo, hi, def) \
  static_assert(                                                        \
      std::string_view(#unit) != "policy" ||                            \
      ((long long)(lo) == CB_POLICY_CONSECUTIVE && (long long)(hi) == CB_POLICY_TIME_WINDOW));
CB_CONFIG_FIELDS(LB_POLICY_BOUNDS)
#undef LB_POLICY_BOUNDS
static_assert(same(CB_POLICY_CONSECUTIVE, Policy::Consecutive) &&
              same(CB_POLICY_COUNT_WINDOW, Policy::CountWindow) &&
              same(CB_POLICY_TIME_WINDOW, Policy::TimeWindow));
static_assert(same(CB_REASON_CONSECUTIVE_FAILURES, Reason::ConsecutiveFailures) &&
              same(CB_REASON_FAILURE_RATE, Reason::FailureRate) &&
              same(CB_REASON_SLOW_CALL_RATE, Reason::SlowCallRate) &&
              same(CB_REASON_OPEN_ELAPSED, Reason::OpenElapsed) &&
              same(CB_REASON_PROBE_FAILED, Reason::ProbeFailed) &&
              same(CB_REASON_PROBE_LEASE_EXPIRED, Reason::ProbeLeaseExpired) &&
              same(CB_REASON_PROBES_SUCCEEDED, Reason::ProbesSucceeded) &&
              same(CB_REASON_MANUAL, Reason::Manual) && same(CB_REASON_TRIPPED, Reason::Tripped) &&
              same(CB_REASON_REJECTED, Reason::Rejected));

// The open durations the core computes stay inside what the ABI promises.
static_assert(core::kShortestOpenNs == CB_MIN_OPEN_DURATION_NS &&
              core::kLongestOpenNs == CB_MAX_DURATION_NS);
// A failure run lives in the state word's aux field until it trips.
static_assert(CB_MAX_FAILURE_THRESHOLD <= StateWord::kAuxMax);
// Probes own a bit each of the ledger; successes count in its field.
static_assert(CB_MAX_HALF_OPEN_CALLS <= ProbeLedger::kSlots);
static_assert(CB_MAX_HALF_OPEN_SUCCESSES <= ProbeLedger::kSuccessMask);
static_assert(CB_MAX_WINDOW_BUCKETS <= core::kMaxBuckets);
// A registry's run, rounded to whole chunks, fits the space; so does the
// default registry's.
static_assert(registry::Space::run_slots(CB_MAX_CAPACITY) <= registry::Space::kSlots);
static_assert(CB_DEFAULT_REGISTRY_CAPACITY <= CB_MAX_CAPACITY &&
              registry::Registry::kDefaultCapacity <= CB_MAX_CAPACITY);
static_assert(registry::Registry::kDefaultEventCapacity <= CB_MAX_EVENT_CAPACITY);
// Names: the name store holds the longest name (read() adds the terminator).
static_assert(CB_MAX_NAME_BYTES <= registry::NameStore::kMaxBytes);
// An open period of the longest duration from the largest clock reading a
// manual clock reaches in practice still fits: deadlines saturate.
static_assert(CB_MAX_DURATION_NS < UINT64_MAX / 2);

}  // namespace
}  // namespace lazybreaker::capi
