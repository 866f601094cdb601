// Every status of the C ABI, once: the codes' texts (cb_strerror) and the
// tests' range come from this list. The values themselves are pinned in
// the header; tests/abi/struct_layout.c pins them again.
#pragma once

#include "lazybreaker/lazybreaker.h"

#define LB_STATUSES(X)                                              \
  X(CB_OK, "success")                                               \
  X(CB_REJECTED, "the breaker rejected the call (fail fast)")       \
  X(CB_EINVAL, "invalid argument or configuration")                 \
  X(CB_EHANDLE, "zero, unknown, destroyed or stale handle")         \
  X(CB_ENOMEM, "out of memory")                                     \
  X(CB_EEXIST, "name already taken")                                \
  X(CB_ENOENT, "no such breaker")                                   \
  X(CB_EFULL, "registry full")                                      \
  X(CB_ECORRUPT, "corrupt registry file")                           \
  X(CB_EVERSION, "registry file has an unsupported layout version") \
  X(CB_EIO, "I/O error")                                            \
  X(CB_EPERM, "permission denied")                                  \
  X(CB_ESTATE, "not possible in the current state")                 \
  X(CB_EINTERNAL, "internal error in lazybreaker")                  \
  X(CB_ERANGE, "buffer too small")                                  \
  X(CB_EBUSY, "a process holds the registry file's lock")

namespace lazybreaker::capi {

#define LB_STATUS_CODE(code, text) code,
// Every status, in the list's order: what the tests range over.
inline constexpr int kStatuses[] = {LB_STATUSES(LB_STATUS_CODE)};
#undef LB_STATUS_CODE

}  // namespace lazybreaker::capi
