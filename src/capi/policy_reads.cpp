// cb_policy_reads: lists.h's CB_POLICY_READS, answered at run time, so that
// a binding's check of the settings a policy ignores, and its policy
// inference, come from the library's table rather than a copy of it.
#include <cstring>
#include <iterator>

#include "capi/errors.hpp"
#include "lazybreaker/lazybreaker.h"

using lazybreaker::capi::fail_at;

namespace {

struct PolicyReads {
  const char *field;
  int by_policy[3];  // indexed by cb_policy_t
};

constexpr PolicyReads kPolicyReads[] = {
#define LB_POLICY_READS_ROW(field, consecutive, count_window, time_window) \
  {#field, {consecutive, count_window, time_window}},
    CB_POLICY_READS(LB_POLICY_READS_ROW)
#undef LB_POLICY_READS_ROW
};

// Every field of cb_config, in order, has its row: a field added to
// CB_CONFIG_FIELDS without one fails to build here.
constexpr const char *kConfigFields[] = {
#define LB_CONFIG_FIELD_NAME(field, type, since, unit, bounds, lo, hi, def) #field,
    CB_CONFIG_FIELDS(LB_CONFIG_FIELD_NAME)
#undef LB_CONFIG_FIELD_NAME
};

constexpr bool same_name(const char *a, const char *b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

constexpr bool rows_follow_fields() {
  if (std::size(kPolicyReads) != std::size(kConfigFields)) return false;
  for (size_t i = 0; i < std::size(kConfigFields); ++i)
    if (!same_name(kPolicyReads[i].field, kConfigFields[i])) return false;
  return true;
}
static_assert(rows_follow_fields(),
              "CB_POLICY_READS must list every field of CB_CONFIG_FIELDS, in its order");
static_assert(CB_POLICY_CONSECUTIVE == 0 && CB_POLICY_COUNT_WINDOW == 1 &&
              CB_POLICY_TIME_WINDOW == 2);

}  // namespace

extern "C" {

CB_API int cb_policy_reads(int policy, const char *field, int *out) CB_NOEXCEPT {
  if (policy < CB_POLICY_CONSECUTIVE || policy > CB_POLICY_TIME_WINDOW)
    return fail_at(CB_EINVAL, "policy", "cb_policy_reads: policy %d is no cb_policy_t", policy);
  if (field == nullptr) return fail_at(CB_EINVAL, "field", "cb_policy_reads: field is NULL");
  if (out == nullptr) return fail_at(CB_EINVAL, "out", "cb_policy_reads: out is NULL");
  for (const PolicyReads &row : kPolicyReads) {
    if (std::strcmp(row.field, field) == 0) {
      *out = row.by_policy[policy];
      return CB_OK;
    }
  }
  return fail_at(CB_EINVAL, "field", "cb_policy_reads: \"%.64s\" is no cb_config field", field);
}

}  // extern "C"
