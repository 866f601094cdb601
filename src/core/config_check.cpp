#include "core/config_check.hpp"

#include <cinttypes>
#include <cstdio>

#include "lazybreaker/lists.h"

namespace lazybreaker::core {
namespace {

enum class Bounds { closed, above, below, zero_or };

template <class T>
bool within(Bounds b, T v, T lo, T hi) {
  switch (b) {
    case Bounds::closed:
      return v >= lo && v <= hi;  // false for NaN, as every case is
    case Bounds::above:
      return v > lo && v <= hi;
    case Bounds::below:
      return v >= lo && v < hi;
    case Bounds::zero_or:
      return v == T(0) || (v >= lo && v <= hi);
  }
  return false;
}

void describe(ConfigFault *f, const char *field, Bounds b, double v, double lo, double hi) {
  static const char *const kForms[] = {"must be %g..%g, got %g", "must be in (%g, %g], got %g",
                                       "must be in [%g, %g), got %g",
                                       "must be 0 or %g..%g, got %g"};
  f->field = field;
  snprintf(f->detail, sizeof f->detail, kForms[int(b)], lo, hi, v);
}

void describe(ConfigFault *f, const char *field, Bounds b, int64_t v, int64_t lo, int64_t hi) {
  f->field = field;
  snprintf(f->detail, sizeof f->detail, "must be %s%" PRId64 "..%" PRId64 ", got %" PRId64,
           b == Bounds::zero_or ? "0 or " : "", lo, hi, v);
}

void describe(ConfigFault *f, const char *field, Bounds b, uint64_t v, uint64_t lo, uint64_t hi) {
  f->field = field;
  snprintf(f->detail, sizeof f->detail, "must be %s%" PRIu64 "..%" PRIu64 ", got %" PRIu64,
           b == Bounds::zero_or ? "0 or " : "", lo, hi, v);
}

// Integers are described as 64-bit values of their signedness; a double as itself.
template <class T>
using Shown = std::conditional_t<std::is_floating_point_v<T>, double,
                                 std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

template <class T>
void check_field(ConfigFault *f, const char *field, Bounds b, T v, T lo, T hi) {
  if (!*f && !within(b, v, lo, hi)) describe(f, field, b, Shown<T>(v), Shown<T>(lo), Shown<T>(hi));
}

}  // namespace

ConfigFault check(const Config &c) {
  ConfigFault f;
#define LB_CHECK_FIELD(field, type, since, unit, bounds, lo, hi, def) \
  check_field<type>(&f, #field, Bounds::bounds, static_cast<type>(c.field), type(lo), type(hi));
  CB_CONFIG_FIELDS(LB_CHECK_FIELD)
#undef LB_CHECK_FIELD
  if (!f && c.open_duration_max_ns != 0 && c.open_duration_max_ns < c.open_duration_ns) {
    f.field = "open_duration_max_ns";
    snprintf(f.detail, sizeof f.detail,
             "must be 0 or open_duration_ns (%" PRIu64 ")..%" PRIu64 ", got %" PRIu64,
             c.open_duration_ns, uint64_t(CB_MAX_DURATION_NS), c.open_duration_max_ns);
  }
  return f;
}

bool finished_and_valid(const Config &c) {
  if (check(c)) return false;
  Config derived = c;
  derived.finish();
  return derived.half_open_timeout_ns == c.half_open_timeout_ns &&
         derived.slow_unit_shift == c.slow_unit_shift &&
         derived.failure_rate_billionths == c.failure_rate_billionths &&
         derived.slow_rate_billionths == c.slow_rate_billionths &&
         derived.shape.by_time == c.shape.by_time &&
         // A file written when the limit was lower keeps its own: holding
         // fewer successes back only settles them sooner.
         c.shape.held_limit <= derived.shape.held_limit &&
         (c.shape.held_limit == 0) == (derived.shape.held_limit == 0) &&
         derived.shape.buckets == c.shape.buckets &&
         derived.shape.bucket_width == c.shape.bucket_width;
}

const char *first_difference(const Config &a, const Config &b) {
#define LB_DIFFERS(field, type, since, unit, bounds, lo, hi, def) \
  if (!(a.field == b.field)) return #field;
  CB_CONFIG_FIELDS(LB_DIFFERS)
#undef LB_DIFFERS
  return nullptr;
}

}  // namespace lazybreaker::core
