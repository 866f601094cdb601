#include "capi/validate.hpp"

#include <cstddef>
#include <cstring>

#include "capi/errors.hpp"
#include "capi/versioned.hpp"

namespace lazybreaker::capi {

bool valid_utf8(std::string_view s) noexcept {
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  const auto *end = p + s.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xe0) == 0xc0) {
      len = 2, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (size_t(end - p) < len) return false;
    for (size_t i = 1; i < len; ++i) {
      if ((p[i] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3f);
    }
    static constexpr uint32_t kMinForLength[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    p += len;
  }
  return true;
}

int check_name(const char *name, bool allow_null, std::string_view *out) noexcept {
  if (name == nullptr) {
    if (!allow_null) return fail(CB_EINVAL, "name is NULL");
    *out = {};
    return CB_OK;
  }
  const size_t len = strnlen(name, CB_MAX_NAME_BYTES + 1);
  if (len == 0) return fail(CB_EINVAL, "name is empty (pass NULL for an anonymous breaker)");
  if (len > CB_MAX_NAME_BYTES)
    return fail(CB_EINVAL, "name is longer than %u bytes", CB_MAX_NAME_BYTES);
  if (!valid_utf8(std::string_view(name, len))) return fail(CB_EINVAL, "name is not valid UTF-8");
  *out = std::string_view(name, len);
  return CB_OK;
}

int check_struct_size(const void *s, size_t size, size_t v1_size, size_t known_size,
                      const char *what) noexcept {
  if (size < v1_size)
    return fail(CB_EINVAL, "%s: struct_size %zu is smaller than the first version's %zu", what,
                size, v1_size);
  const auto *bytes = static_cast<const unsigned char *>(s);
  for (size_t i = known_size; i < size; ++i)
    if (bytes[i] != 0)
      return fail(CB_EINVAL,
                  "%s: struct_size %zu names fields this library (%s) does not know, and they "
                  "are not zero (first non-zero byte at offset %zu)",
                  what, size, CB_VERSION_STRING, i);
  return CB_OK;
}

namespace {

bool in_unit_interval(double v) { return v > 0.0 && v <= 1.0; }  // false for NaN

// An integer field and its inclusive range.
struct Range {
  const char *field;
  uint64_t value, min, max;
};

// CB_OK if every value is in its range; else CB_EINVAL naming the first field that is not.
template <size_t N>
int check_ranges(const Range (&ranges)[N]) {
  for (const Range &r : ranges)
    if (r.value < r.min || r.value > r.max)
      return fail(CB_EINVAL, "cb_config: %s must be %llu..%llu, got %llu", r.field,
                  (unsigned long long)r.min, (unsigned long long)r.max,
                  (unsigned long long)r.value);
  return CB_OK;
}

}  // namespace

int to_core_config(const cb_config *cfg, core::Config *out) noexcept {
  core::Config c;
  if (cfg != nullptr) {
    const size_t v1 = FirstVersion::kConfig;
    const int st = check_struct_size(cfg, cfg->struct_size, v1, sizeof(cb_config), "cb_config");
    if (st != CB_OK) return st;
    const size_t size = cfg->struct_size;
    const Range v1_ranges[] = {
        {"failure_threshold", cfg->failure_threshold, 1, CB_MAX_FAILURE_THRESHOLD},
        {"open_duration_ns", cfg->open_duration_ns, CB_MIN_OPEN_DURATION_NS, CB_MAX_DURATION_NS},
        {"half_open_max_calls", cfg->half_open_max_calls, 1, CB_MAX_HALF_OPEN_CALLS},
        {"half_open_success_threshold", cfg->half_open_success_threshold, 1,
         CB_MAX_HALF_OPEN_SUCCESSES},
        {"half_open_timeout_ns", cfg->half_open_timeout_ns, 0, CB_MAX_DURATION_NS},
    };
    if (const int st2 = check_ranges(v1_ranges); st2 != CB_OK) return st2;
    c.failure_threshold = cfg->failure_threshold;
    c.open_duration_ns = cfg->open_duration_ns;
    c.half_open_max_calls = cfg->half_open_max_calls;
    c.half_open_success_threshold = cfg->half_open_success_threshold;
    c.half_open_timeout_ns = cfg->half_open_timeout_ns;

    // 1.1: all of these or none (a caller built against 1.0 gets defaults).
    if (LB_HAS(cb_config, size, open_jitter)) {
      if (cfg->policy != CB_POLICY_CONSECUTIVE && cfg->policy != CB_POLICY_COUNT_WINDOW &&
          cfg->policy != CB_POLICY_TIME_WINDOW)
        return fail(CB_EINVAL,
                    "cb_config: policy must be CB_POLICY_CONSECUTIVE, CB_POLICY_COUNT_WINDOW or "
                    "CB_POLICY_TIME_WINDOW, got %d",
                    cfg->policy);
      const Range v1_1_ranges[] = {
          {"window_size", cfg->window_size, 1, CB_MAX_WINDOW_SIZE},
          {"window_duration_ns", cfg->window_duration_ns, CB_MIN_WINDOW_DURATION_NS,
           CB_MAX_DURATION_NS},
          {"window_buckets", cfg->window_buckets, 1, CB_MAX_WINDOW_BUCKETS},
          {"minimum_calls", cfg->minimum_calls, 1, CB_MAX_MINIMUM_CALLS},
          {"slow_call_ns", cfg->slow_call_ns, 0, CB_MAX_DURATION_NS},
      };
      if (const int st2 = check_ranges(v1_1_ranges); st2 != CB_OK) return st2;
      if (!in_unit_interval(cfg->failure_rate_threshold))
        return fail(CB_EINVAL, "cb_config: failure_rate_threshold must be in (0, 1], got %g",
                    cfg->failure_rate_threshold);
      if (!in_unit_interval(cfg->slow_call_rate_threshold))
        return fail(CB_EINVAL, "cb_config: slow_call_rate_threshold must be in (0, 1], got %g",
                    cfg->slow_call_rate_threshold);
      if (!(cfg->open_backoff_multiplier >= 1.0 &&
            cfg->open_backoff_multiplier <= CB_MAX_BACKOFF_MULTIPLIER))
        return fail(CB_EINVAL, "cb_config: open_backoff_multiplier must be 1..%g, got %g",
                    CB_MAX_BACKOFF_MULTIPLIER, cfg->open_backoff_multiplier);
      if (cfg->open_duration_max_ns != 0 && (cfg->open_duration_max_ns < cfg->open_duration_ns ||
                                             cfg->open_duration_max_ns > CB_MAX_DURATION_NS))
        return fail(CB_EINVAL,
                    "cb_config: open_duration_max_ns must be 0 or open_duration_ns..%llu, got %llu",
                    CB_MAX_DURATION_NS, (unsigned long long)cfg->open_duration_max_ns);
      if (!(cfg->open_jitter >= 0.0 && cfg->open_jitter < 1.0))
        return fail(CB_EINVAL, "cb_config: open_jitter must be in [0, 1), got %g",
                    cfg->open_jitter);
      c.policy = core::Policy(cfg->policy);
      c.window_size = cfg->window_size;
      c.window_duration_ns = cfg->window_duration_ns;
      c.window_buckets = cfg->window_buckets;
      c.minimum_calls = cfg->minimum_calls;
      c.failure_rate_threshold = cfg->failure_rate_threshold;
      c.slow_call_ns = cfg->slow_call_ns;
      c.slow_call_rate_threshold = cfg->slow_call_rate_threshold;
      c.open_backoff_multiplier = cfg->open_backoff_multiplier;
      c.open_duration_max_ns = cfg->open_duration_max_ns;
      c.open_jitter = cfg->open_jitter;
    } else if (size > v1) {
      return fail(CB_EINVAL,
                  "cb_config: struct_size %zu ends inside the fields added in 1.1 (%zu or %zu)",
                  size, v1, sizeof(cb_config));
    }
  }
  c.finish();
  *out = c;
  return CB_OK;
}

}  // namespace lazybreaker::capi
