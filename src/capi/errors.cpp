#include "capi/errors.hpp"

#include <cstdarg>
#include <cstdio>

#include "lazybreaker/lazybreaker.h"

namespace lazybreaker::capi {
namespace {

thread_local char t_message[512] = "";
thread_local const char *t_field = nullptr;

void record(const char *field, const char *fmt, va_list args) noexcept {
  vsnprintf(t_message, sizeof t_message, fmt, args);
  t_field = field;
}

}  // namespace

int fail(int status, const char *fmt, ...) noexcept {
  va_list args;
  va_start(args, fmt);
  record(nullptr, fmt, args);
  va_end(args);
  return status;
}

int fail_at(int status, const char *field, const char *fmt, ...) noexcept {
  va_list args;
  va_start(args, fmt);
  record(field, fmt, args);
  va_end(args);
  return status;
}

}  // namespace lazybreaker::capi

extern "C" {

CB_API const char *cb_last_error_message(void) CB_NOEXCEPT { return lazybreaker::capi::t_message; }

CB_API const char *cb_last_error_field(void) CB_NOEXCEPT { return lazybreaker::capi::t_field; }

CB_API const char *cb_strerror(int status) CB_NOEXCEPT {
#define LB_STATUS_TEXT(code, text) \
  case code:                       \
    return #code ": " text;
  switch (status) { CB_STATUS_LIST(LB_STATUS_TEXT) }
#undef LB_STATUS_TEXT
  return "unknown status";
}

CB_API const char *cb_status_name(int status) CB_NOEXCEPT {
#define LB_STATUS_NAME(code, text) \
  case code:                       \
    return #code;
  switch (status) { CB_STATUS_LIST(LB_STATUS_NAME) }
#undef LB_STATUS_NAME
  return nullptr;
}

// A state's or a reason's name: the lists give both as (enumerator, name).
#define LB_NAMED_CASE(value, name) \
  case value:                      \
    return name;

CB_API const char *cb_state_name(int state) CB_NOEXCEPT {
  switch (state) { CB_STATE_LIST(LB_NAMED_CASE) }
  return nullptr;
}

CB_API const char *cb_reason_name(int reason) CB_NOEXCEPT {
  switch (reason) { CB_REASON_LIST(LB_NAMED_CASE) }
  return nullptr;
}
#undef LB_NAMED_CASE

CB_API const char *cb_version_string(void) CB_NOEXCEPT { return CB_VERSION_STRING; }

CB_API int cb_version_number(void) CB_NOEXCEPT { return CB_VERSION_NUMBER; }

}  // extern "C"
