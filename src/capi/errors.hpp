// Status codes and the per-thread last error: its message and its field.
#pragma once

#include "platform/platform.hpp"

namespace lazybreaker::capi {

// Records a message for cb_last_error_message(), no field for
// cb_last_error_field(), and returns `status`.
[[gnu::cold, gnu::format(LB_PRINTF_FORMAT, 2, 3)]] int fail(int status, const char *fmt,
                                                            ...) noexcept;

// As fail, naming `field` (a static string: the C name of the config or
// options field, or of the parameter, at fault) for cb_last_error_field().
[[gnu::cold, gnu::format(LB_PRINTF_FORMAT, 3, 4)]] int fail_at(int status, const char *field,
                                                               const char *fmt, ...) noexcept;

}  // namespace lazybreaker::capi
