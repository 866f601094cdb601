// Status codes and the per-thread last-error message.
#pragma once

namespace lazybreaker::capi {

// Records a message for cb_last_error_message() and returns `status`.
[[gnu::cold, gnu::format(printf, 2, 3)]] int fail(int status, const char *fmt, ...) noexcept;

}  // namespace lazybreaker::capi
