// A configuration against the limits lists.h gives its fields: the one
// check that a caller's cb_config (capi/validate.cpp) and a configuration
// read from a registry file (registry/shared_file.cpp) both pass through.
#pragma once

#include <cstddef>

#include "core/breaker.hpp"

namespace lazybreaker::core {

// The first field out of its bounds, in cb_config's order, and why.
struct ConfigFault {
  const char *field = nullptr;  // the field's C name (static), nullptr when none is
  char detail[128] = "";        // e.g. "must be 1..65535, got 0"
  explicit operator bool() const { return field != nullptr; }
};

// The given fields (finish() not needed): each within its bounds, and
// open_duration_max_ns 0 or at least open_duration_ns.
ConfigFault check(const Config &c);

// A configuration as finish() leaves it: check passes and finishing it
// again changes none of its derived fields. What a registry file's stored
// configurations must be before a breaker runs on one.
bool finished_and_valid(const Config &c);

// The first field (in cb_config's order) whose value differs, nullptr when
// none does: what cb_get_or_create reports when a name has another one.
const char *first_difference(const Config &a, const Config &b);

}  // namespace lazybreaker::core
