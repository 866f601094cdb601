// cb_metrics_prometheus: the registry's Prometheus text
// (capi/prometheus.cpp) into the caller's buffer. Not on the request
// path: it allocates, and a failed allocation is CB_ENOMEM.
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "capi/errors.hpp"
#include "capi/prometheus.hpp"
#include "capi/resolve.hpp"
#include "lazybreaker/lazybreaker.h"
#include "registry/grace.hpp"

using lazybreaker::capi::fail;
using lazybreaker::registry::Registry;

extern "C" CB_API int cb_metrics_prometheus(cb_registry *reg, char *buf, size_t size,
                                            size_t *needed) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
  if (needed == nullptr) return fail(CB_EINVAL, "cb_metrics_prometheus: needed is NULL");
  if (buf == nullptr && size > 0) return fail(CB_EINVAL, "cb_metrics_prometheus: buf is NULL");
  Registry *r = nullptr;
  if (const int st = lazybreaker::capi::resolve_registry(reg, &r); st != CB_OK) return st;
  try {
    const std::string text = lazybreaker::capi::prometheus_text(*r);
    *needed = text.size();
    if (buf == nullptr) return CB_OK;  // a size query
    if (size <= text.size())
      return fail(CB_ERANGE,
                  "cb_metrics_prometheus: the text needs %zu bytes and a NUL, buf has %zu",
                  text.size(), size);
    std::memcpy(buf, text.c_str(), text.size() + 1);
    return CB_OK;
  } catch (const std::bad_alloc &) {
    return fail(CB_ENOMEM, "cb_metrics_prometheus: out of memory while rendering the text");
  } catch (const std::exception &e) {
    return fail(CB_EINTERNAL, "cb_metrics_prometheus: %s", e.what());
  } catch (...) {
    return fail(CB_EINTERNAL, "cb_metrics_prometheus: an unexpected exception");
  }
}
