#include "capi/errors.hpp"

#include <cstdarg>
#include <cstdio>

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
  switch (status) {
    case CB_OK:
      return "CB_OK: success";
    case CB_REJECTED:
      return "CB_REJECTED: the breaker rejected the call (fail fast)";
    case CB_EINVAL:
      return "CB_EINVAL: invalid argument or configuration";
    case CB_EHANDLE:
      return "CB_EHANDLE: zero, unknown, destroyed or stale handle";
    case CB_ENOMEM:
      return "CB_ENOMEM: out of memory";
    case CB_EEXIST:
      return "CB_EEXIST: name already taken";
    case CB_ENOENT:
      return "CB_ENOENT: no such breaker";
    case CB_EFULL:
      return "CB_EFULL: registry full";
    case CB_ECORRUPT:
      return "CB_ECORRUPT: corrupt registry file";
    case CB_EVERSION:
      return "CB_EVERSION: registry file has an unsupported layout version";
    case CB_EIO:
      return "CB_EIO: I/O error";
    case CB_EPERM:
      return "CB_EPERM: permission denied";
    case CB_ESTATE:
      return "CB_ESTATE: not possible in the current state";
    case CB_EINTERNAL:
      return "CB_EINTERNAL: internal error in lazybreaker";
    case CB_ERANGE:
      return "CB_ERANGE: buffer too small";
    default:
      return "unknown status";
  }
}

CB_API const char *cb_version_string(void) CB_NOEXCEPT { return CB_VERSION_STRING; }

CB_API int cb_version_number(void) CB_NOEXCEPT { return CB_VERSION_NUMBER; }

}  // extern "C"
