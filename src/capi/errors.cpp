#include "capi/errors.hpp"

#include <cstdarg>
#include <cstdio>

#include "capi/statuses.hpp"
#include "lazybreaker/lazybreaker.h"

namespace lazybreaker::capi {
namespace {
thread_local char t_message[512] = "";
}

int fail(int status, const char *fmt, ...) noexcept {
  va_list args;
  va_start(args, fmt);
  vsnprintf(t_message, sizeof t_message, fmt, args);
  va_end(args);
  return status;
}

}  // namespace lazybreaker::capi

extern "C" {

CB_API const char *cb_last_error_message(void) CB_NOEXCEPT { return lazybreaker::capi::t_message; }

CB_API const char *cb_strerror(int status) CB_NOEXCEPT {
#define LB_STATUS_TEXT(code, text) \
  case code:                       \
    return #code ": " text;
  switch (status) { LB_STATUSES(LB_STATUS_TEXT) }
#undef LB_STATUS_TEXT
  return "unknown status";
}

CB_API const char *cb_version_string(void) CB_NOEXCEPT { return CB_VERSION_STRING; }

CB_API int cb_version_number(void) CB_NOEXCEPT { return CB_VERSION_NUMBER; }

}  // extern "C"
