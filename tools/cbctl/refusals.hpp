// What the library refused, in cbctl's words: its options (--open-for,
// --create-file) instead of the C fields and flags. Built from the status,
// the field at fault (cb_last_error_field()) and what cbctl itself passed
// or sees, never from the text of cb_last_error_message(); that text is
// shown only where it names nothing of the C API.
#pragma once

#include <lazybreaker/lazybreaker.h>

#include <optional>
#include <string>

#include "config_options.hpp"
#include "registry_file.hpp"

namespace cbctl {

// "--for 0s must be at least 1us": cb_trip's refusal of open_for_ns.
std::string trip_refusal(const std::string &text, uint64_t open_for_ns);

// A Failure for a call on the breaker `name` in `file` that failed with
// `status`: a taken name, a full file, a breaker destroyed meanwhile in
// cbctl's words; anything else as the library says it.
Failure breaker_refusal(const std::string &file, const std::string &name, int status);

// A Failure for a cb_create or (exist_ok) cb_get_or_create on `file` that
// failed with `status`: a configuration field out of range as its option,
// a bad name, another configuration under the name (the field that
// differs, both values); else as breaker_refusal. `existing`: the registry
// in which to read the breaker of that name, if any.
Failure create_refusal(const std::string &file, const std::string &name, int status,
                       const cb_config &cfg, const ConfigTexts &texts, cb_registry *existing,
                       bool exist_ok);

// A Failure for a cb_registry_open of `path` with `request` that failed
// with `status`: --capacity, --mode and --create-file's refusals in
// cbctl's words (a missing file, a symlink, a file a create may not trust,
// a --capacity that is not the file's).
Failure open_refusal(const std::string &path, const OpenRequest &request, int status);

}  // namespace cbctl
