// The ABI describes itself: names of statuses, states and reasons, the
// field at fault in a failing call, and a breaker's configuration read
// back, each checked against the header's own lists (lazybreaker/lists.h).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "fixture.hpp"

namespace {

std::string field() {
  const char *f = cb_last_error_field();
  return f == nullptr ? "(null)" : f;
}

// A value of `field` outside its bounds, from the list itself.
struct Invalid {
  const char *field;
  void (*set)(cb_config *);
};

template <class T>
T beyond(const char *bounds, T lo, T hi) {
  const std::string b = bounds;
  if (b == "above") return lo;   // lo itself is out of (lo, hi]
  if (b == "below") return hi;   // hi itself is out of [lo, hi)
  if (lo > T(0)) return lo - 1;  // closed, or zero_or with a lowest value above 1
  return hi + 1;
}

#define LB_INVALID(field, type, since, unit, bounds, lo, hi, def) \
  {#field, [](cb_config *c) { c->field = beyond<type>(#bounds, type(lo), type(hi)); }},
const Invalid kInvalid[] = {CB_CONFIG_FIELDS(LB_INVALID)};
#undef LB_INVALID

}  // namespace

TEST_CASE("every status, state and reason of the lists has its name, and no other value has one") {
  std::vector<int> statuses;
#define LB_STATUS(code, text)                                              \
  CHECK(std::string(cb_status_name(code)) == #code);                       \
  CHECK(std::string(cb_strerror(code)) == std::string(#code ": ") + text); \
  statuses.push_back(code);
  CB_STATUS_LIST(LB_STATUS)
#undef LB_STATUS
  for (int v = -100; v <= 100; ++v)
    if (std::find(statuses.begin(), statuses.end(), v) == statuses.end())
      CHECK(cb_status_name(v) == nullptr);

  CHECK(std::string(cb_state_name(CB_STATE_CLOSED)) == "closed");
  CHECK(std::string(cb_state_name(CB_STATE_OPEN)) == "open");
  CHECK(std::string(cb_state_name(CB_STATE_HALF_OPEN)) == "half_open");
  CHECK(std::string(cb_state_name(CB_STATE_FORCED_OPEN)) == "forced_open");
  CHECK(std::string(cb_state_name(CB_STATE_DISABLED)) == "disabled");
  CHECK(cb_state_name(-1) == nullptr);
  CHECK(cb_state_name(5) == nullptr);

  // The reason's name is its enumerator without CB_REASON_, in lower case.
#define LB_REASON(value, name)                                                 \
  {                                                                            \
    std::string lower = std::string(#value).substr(std::strlen("CB_REASON_")); \
    for (char &ch : lower) ch = char(std::tolower(ch));                        \
    CHECK(std::string(cb_reason_name(value)) == lower);                        \
    CHECK(lower == name);                                                      \
  }
  CB_REASON_LIST(LB_REASON)
#undef LB_REASON
  CHECK(std::string(cb_reason_name(CB_REASON_CONSECUTIVE_FAILURES)) == "consecutive_failures");
  CHECK(cb_reason_name(0) == nullptr);
  CHECK(cb_reason_name(11) == nullptr);
}

TEST_CASE("cb_config_init sets the list's defaults") {
  cb_config c;
  cb_config_init(&c);
#define LB_DEFAULT(field, type, since, unit, bounds, lo, hi, def) CHECK(c.field == type(def));
  CB_CONFIG_FIELDS(LB_DEFAULT)
#undef LB_DEFAULT
}

TEST_CASE("a value out of a field's bounds names that field, and a success leaves the field") {
  ManualRegistry r;
  for (const Invalid &bad : kInvalid) {
    CAPTURE(bad.field);
    cb_config c;
    cb_config_init(&c);
    bad.set(&c);
    cb_handle h = 0;
    CHECK(cb_create(r.reg, nullptr, &c, &h) == CB_EINVAL);
    CHECK(h == 0);
    CHECK(field() == bad.field);
    CHECK(std::strstr(cb_last_error_message(), bad.field) != nullptr);
    // A call that succeeds leaves the last error as it was.
    cb_config ok;
    cb_config_init(&ok);
    CHECK(cb_create(r.reg, nullptr, &ok, &h) == CB_OK);
    CHECK(field() == bad.field);
    CHECK(cb_destroy(h) == CB_OK);
  }
  // NaN is out of every real field's bounds.
  cb_config c;
  cb_config_init(&c);
  c.open_jitter = std::nan("");
  cb_handle h = 0;
  CHECK(cb_create(r.reg, nullptr, &c, &h) == CB_EINVAL);
  CHECK(field() == "open_jitter");
  // The one rule across fields.
  cb_config_init(&c);
  c.open_duration_max_ns = c.open_duration_ns - 1;
  CHECK(cb_create(r.reg, nullptr, &c, &h) == CB_EINVAL);
  CHECK(field() == "open_duration_max_ns");
  // An unknown policy says which values there are, in C.
  cb_config_init(&c);
  c.policy = -1;
  CHECK(cb_create(r.reg, nullptr, &c, &h) == CB_EINVAL);
  CHECK(field() == "policy");
  CHECK(std::string(cb_last_error_message()) ==
        "cb_config: policy must be CB_POLICY_CONSECUTIVE, CB_POLICY_COUNT_WINDOW or "
        "CB_POLICY_TIME_WINDOW, got -1");
}

TEST_CASE("messages keep their text; parameters and option fields are named; others are NULL") {
  ManualRegistry r;
  cb_config c = config(0, 1000);
  cb_handle h = 0;
  CHECK(cb_create(r.reg, nullptr, &c, &h) == CB_EINVAL);
  CHECK(std::string(cb_last_error_message()) ==
        "cb_config: failure_threshold must be 1..65535, got 0");
  CHECK(field() == "failure_threshold");

  CHECK(cb_create(r.reg, "", nullptr, &h) == CB_EINVAL);
  CHECK(field() == "name");
  h = r.create(config(3, 1000), "named");
  CHECK(cb_trip(h, 0) == CB_EINVAL);
  CHECK(field() == "open_for_ns");
  CHECK(cb_done(h, admit(h), 7) == CB_EINVAL);
  CHECK(field() == "outcome");
  // A failure that is no field's clears it.
  CHECK(cb_allow(h, nullptr) == CB_EINVAL);
  CHECK(cb_last_error_field() == nullptr);

  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = CB_MAX_CAPACITY + 1;
  cb_registry *bad = nullptr;
  CHECK(cb_registry_open(&o, &bad) == CB_EINVAL);
  CHECK(field() == "capacity");
  cb_registry_options_init(&o);
  o.event_capacity = CB_MAX_EVENT_CAPACITY + 1;
  CHECK(cb_registry_open(&o, &bad) == CB_EINVAL);
  CHECK(field() == "event_capacity");
  cb_registry_options_init(&o);
  o.clock = 9;
  CHECK(cb_registry_open(&o, &bad) == CB_EINVAL);
  CHECK(field() == "clock");
  CHECK(bad == nullptr);
}

TEST_CASE("cb_get_or_create names the first field that differs") {
  ManualRegistry r;
  cb_config held = config(3, 5000);
  held.window_size = 40;
  cb_handle h = 0;
  REQUIRE(cb_get_or_create(r.reg, "pay", &held, &h) == CB_OK);

  cb_config other = held;
  other.window_size = 41;
  other.open_jitter = 0.5;
  cb_handle h2 = 0;
  CHECK(cb_get_or_create(r.reg, "pay", &other, &h2) == CB_EEXIST);
  CHECK(h2 == 0);
  CHECK(field() == "window_size");
  CHECK(std::strstr(cb_last_error_message(), "window_size") != nullptr);
  other.window_size = 40;
  CHECK(cb_get_or_create(r.reg, "pay", &other, &h2) == CB_EEXIST);
  CHECK(field() == "open_jitter");
  // A zero lease is the open duration: equal configurations.
  cb_config same = held;
  same.half_open_timeout_ns = held.open_duration_ns;
  CHECK(cb_get_or_create(r.reg, "pay", &same, &h2) == CB_OK);
  CHECK(h2 == h);
  // CB_EEXIST from cb_create is the name's, not a field's.
  CHECK(cb_create(r.reg, "pay", &held, &h2) == CB_EEXIST);
  CHECK(cb_last_error_field() == nullptr);
}

TEST_CASE("cb_config_get reads a configuration back, and cb_get_or_create finds it with that") {
  ManualRegistry r;
  cb_config c = config(7, 2000000, 3, 2);
  c.policy = CB_POLICY_TIME_WINDOW;
  c.window_duration_ns = 5000000;
  c.window_buckets = 5;
  c.minimum_calls = 9;
  c.failure_rate_threshold = 0.25;
  c.slow_call_ns = 1234;
  c.open_backoff_multiplier = 2.5;
  c.open_duration_max_ns = 9000000;
  c.open_jitter = 0.125;
  const cb_handle h = r.create(c, "svc");

  cb_config back;
  cb_config_init(&back);
  REQUIRE(cb_config_get(h, &back) == CB_OK);
  CHECK(back.struct_size == sizeof back);
  // Every field as given, but a zero lease, which reads as the open duration.
  c.half_open_timeout_ns = c.open_duration_ns;
#define LB_SAME(field, type, since, unit, bounds, lo, hi, def) CHECK(back.field == c.field);
  CB_CONFIG_FIELDS(LB_SAME)
#undef LB_SAME
  cb_handle found = 0;
  CHECK(cb_get_or_create(r.reg, "svc", &back, &found) == CB_OK);
  CHECK(found == h);

  // A caller of the first version gets the fields it knows, and not a byte more.
  struct {
    cb_config cfg;
    unsigned char guard[8];
  } old;
  std::memset(&old, 0xab, sizeof old);
  old.cfg.struct_size = offsetof(cb_config, half_open_timeout_ns) + sizeof(uint64_t);
  REQUIRE(cb_config_get(h, &old.cfg) == CB_OK);
  CHECK(old.cfg.failure_threshold == 7);
  CHECK(old.cfg.half_open_timeout_ns == 2000000);
  const auto *tail = reinterpret_cast<const unsigned char *>(&old.cfg.policy);
  CHECK(*tail == 0xab);

  // Bad arguments change nothing.
  CHECK(cb_config_get(h, nullptr) == CB_EINVAL);
  CHECK(field() == "out");
  cb_config small;
  std::memset(&small, 0x5a, sizeof small);
  small.struct_size = 8;
  CHECK(cb_config_get(h, &small) == CB_EINVAL);
  CHECK(field() == "struct_size");
  CHECK(small.failure_threshold == 0x5a5a5a5au);
  CHECK(cb_config_get(0, &back) == CB_EHANDLE);
  REQUIRE(cb_destroy(h) == CB_OK);
  cb_config after;
  cb_config_init(&after);
  CHECK(cb_config_get(h, &after) == CB_EHANDLE);
  CHECK(after.failure_threshold == 5);
}
