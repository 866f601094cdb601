// cb_policy_reads: lists.h's CB_POLICY_READS at run time, and the table
// held to the library's behaviour: a field a policy is said to ignore
// changes nothing its breakers do.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fixture.hpp"

namespace {

int reads(int policy, const char *field) {
  int out = -1;
  REQUIRE(cb_policy_reads(policy, field, &out) == CB_OK);
  return out;
}

std::vector<std::string> config_fields() {
  std::vector<std::string> names;
#define LB_NAME(field, type, since, unit, bounds, lo, hi, def) names.push_back(#field);
  CB_CONFIG_FIELDS(LB_NAME)
#undef LB_NAME
  return names;
}

// A configuration of `policy` that trips within the calls below, with the
// field `field` moved to another valid value when `moved`.
cb_config tripping(int policy, const std::string &field, bool moved) {
  cb_config c = config(3, 1'000'000'000);
  c.policy = policy;
  c.window_size = 10;
  c.minimum_calls = 5;
  c.window_duration_ns = 10'000'000'000;
  c.window_buckets = 10;
  c.failure_rate_threshold = 0.5;
  if (!moved) return c;
  if (field == "failure_threshold") c.failure_threshold = 1;
  if (field == "window_size") c.window_size = 3;
  if (field == "window_duration_ns") c.window_duration_ns = 1'000'000;
  if (field == "window_buckets") c.window_buckets = 1;
  if (field == "minimum_calls") c.minimum_calls = 1;
  if (field == "failure_rate_threshold") c.failure_rate_threshold = 0.1;
  return c;
}

// The states two breakers pass through, call by call, under the same
// outcomes and the same clock.
bool behave_alike(const cb_config &a, const cb_config &b, unsigned seed) {
  ManualRegistry r;
  const cb_handle ha = r.create(a), hb = r.create(b);
  std::mt19937 rng(seed);
  for (int call = 0; call < 400; ++call) {
    const int outcome = rng() % 3 == 0 ? CB_SUCCESS : CB_FAILURE;
    cb_ticket ta = 0, tb = 0;
    const int sa = cb_allow(ha, &ta), sb = cb_allow(hb, &tb);
    if (sa != sb) return false;
    if (sa == CB_OK) {
      REQUIRE(cb_done(ha, ta, outcome) == CB_OK);
      REQUIRE(cb_done(hb, tb, outcome) == CB_OK);
    }
    if (cb_state(ha) != cb_state(hb)) return false;
    r.advance(rng() % 4 == 0 ? 600'000'000 : 7'000'000);
  }
  return true;
}

}  // namespace

TEST_CASE("cb_policy_reads answers CB_POLICY_READS for every field of cb_config") {
  const std::vector<std::string> fields = config_fields();
  REQUIRE(fields.size() == 16);
  int row = 0;
#define LB_CHECK_ROW(field, consecutive, count_window, time_window) \
  CHECK(fields[row++] == #field);                                   \
  CHECK(reads(CB_POLICY_CONSECUTIVE, #field) == (consecutive));     \
  CHECK(reads(CB_POLICY_COUNT_WINDOW, #field) == (count_window));   \
  CHECK(reads(CB_POLICY_TIME_WINDOW, #field) == (time_window));
  CB_POLICY_READS(LB_CHECK_ROW)
#undef LB_CHECK_ROW
  CHECK(row == 16);
  CHECK(reads(CB_POLICY_CONSECUTIVE, "window_size") == CB_FIELD_READ_WITH_SLOW_CALLS);
  CHECK(reads(CB_POLICY_COUNT_WINDOW, "failure_threshold") == CB_FIELD_IGNORED);
  CHECK(reads(CB_POLICY_TIME_WINDOW, "window_buckets") == CB_FIELD_READ);
}

TEST_CASE("cb_policy_reads refuses what is no policy or no field, and writes nothing") {
  int out = 42;
  CHECK(cb_policy_reads(3, "window_size", &out) == CB_EINVAL);
  CHECK(std::strcmp(cb_last_error_field(), "policy") == 0);
  CHECK(cb_policy_reads(-1, "window_size", &out) == CB_EINVAL);
  CHECK(cb_policy_reads(CB_POLICY_CONSECUTIVE, "window", &out) == CB_EINVAL);
  CHECK(std::strcmp(cb_last_error_field(), "field") == 0);
  CHECK(cb_policy_reads(CB_POLICY_CONSECUTIVE, "Window_Size", &out) == CB_EINVAL);
  CHECK(cb_policy_reads(CB_POLICY_CONSECUTIVE, "", &out) == CB_EINVAL);
  CHECK(cb_policy_reads(CB_POLICY_CONSECUTIVE, "struct_size", &out) == CB_EINVAL);
  CHECK(cb_policy_reads(CB_POLICY_CONSECUTIVE, nullptr, &out) == CB_EINVAL);
  CHECK(std::strcmp(cb_last_error_field(), "field") == 0);
  CHECK(cb_policy_reads(CB_POLICY_CONSECUTIVE, "window_size", nullptr) == CB_EINVAL);
  CHECK(std::strcmp(cb_last_error_field(), "out") == 0);
  CHECK(out == 42);
}

TEST_CASE("a field the table says a policy ignores changes nothing its breakers do") {
  const char *const policy_fields[] = {"failure_threshold",  "window_size",
                                       "window_duration_ns", "window_buckets",
                                       "minimum_calls",      "failure_rate_threshold"};
  for (int policy = CB_POLICY_CONSECUTIVE; policy <= CB_POLICY_TIME_WINDOW; ++policy) {
    for (const char *field : policy_fields) {
      CAPTURE(policy);
      CAPTURE(field);
      const int how = reads(policy, field);
      const bool alike = behave_alike(tripping(policy, field, false), tripping(policy, field, true),
                                      unsigned(policy * 31 + std::strlen(field)));
      // slow_call_ns is 0 here, so a field read only with slow calls is ignored.
      if (how != CB_FIELD_READ) CHECK(alike);
      // The moved values are chosen so that every field a policy reads shows.
      if (how == CB_FIELD_READ) CHECK_FALSE(alike);
    }
  }
}
