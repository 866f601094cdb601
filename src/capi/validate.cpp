#include "capi/validate.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "capi/errors.hpp"
#include "capi/versioned.hpp"
#include "core/config_check.hpp"

namespace lazybreaker::capi {

bool valid_utf8(std::string_view s) noexcept {
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  const auto *end = p + s.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xe0) == 0xc0) {
      len = 2, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (size_t(end - p) < len) return false;
    for (size_t i = 1; i < len; ++i) {
      if ((p[i] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3f);
    }
    static constexpr uint32_t kMinForLength[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    p += len;
  }
  return true;
}

int check_name(const char *name, bool allow_null, std::string_view *out) noexcept {
  if (name == nullptr) {
    if (!allow_null) return fail_at(CB_EINVAL, "name", "name is NULL");
    *out = {};
    return CB_OK;
  }
  const size_t len = strnlen(name, CB_MAX_NAME_BYTES + 1);
  if (len == 0)
    return fail_at(CB_EINVAL, "name", "name is empty (pass NULL for an anonymous breaker)");
  if (len > CB_MAX_NAME_BYTES)
    return fail_at(CB_EINVAL, "name", "name is longer than %u bytes", CB_MAX_NAME_BYTES);
  if (!valid_utf8(std::string_view(name, len)))
    return fail_at(CB_EINVAL, "name", "name is not valid UTF-8");
  *out = std::string_view(name, len);
  return CB_OK;
}

int check_struct_bound(size_t size, const char *what) noexcept {
  if (size <= kMaxStructSize) return CB_OK;
  return fail_at(CB_EINVAL, "struct_size",
                 "%s: struct_size %zu is larger than any version of the struct can be (%zu): "
                 "was it set?",
                 what, size, kMaxStructSize);
}

int check_struct_size(const void *s, size_t size, size_t v1_size, size_t known_size,
                      const char *what) noexcept {
  if (const int st = check_struct_bound(size, what); st != CB_OK) return st;
  if (size < v1_size)
    return fail_at(CB_EINVAL, "struct_size",
                   "%s: struct_size %zu is smaller than the first version's %zu", what, size,
                   v1_size);
  const auto *bytes = static_cast<const unsigned char *>(s);
  for (size_t i = known_size; i < size; ++i)
    if (bytes[i] != 0)
      return fail_at(CB_EINVAL, "struct_size",
                     "%s: struct_size %zu names fields this library (%s) does not know, and they "
                     "are not zero (first non-zero byte at offset %zu)",
                     what, size, CB_VERSION_STRING, i);
  return CB_OK;
}

namespace {

// Every field of a caller's cb_config: those its struct_size holds as it
// set them, the rest (an older caller's) the defaults.
void copy_fields(const cb_config &cfg, size_t size, core::Config *c) {
  cb_config full;
  cb_config_init(&full);
  std::memcpy(&full, &cfg, std::min(size, sizeof full));
#define LB_COPY_FIELD(field, type, since, unit, bounds, lo, hi, def) \
  c->field = decltype(c->field)(full.field);
  CB_CONFIG_FIELDS(LB_COPY_FIELD)
#undef LB_COPY_FIELD
}

int refuse(const core::ConfigFault &f, const cb_config &cfg) {
  // The one field whose values have names in C.
  if (std::strcmp(f.field, "policy") == 0)
    return fail_at(CB_EINVAL, f.field,
                   "cb_config: policy must be CB_POLICY_CONSECUTIVE, CB_POLICY_COUNT_WINDOW or "
                   "CB_POLICY_TIME_WINDOW, got %d",
                   cfg.policy);
  return fail_at(CB_EINVAL, f.field, "cb_config: %s %s", f.field, f.detail);
}

}  // namespace

int to_core_config(const cb_config *cfg, core::Config *out) noexcept {
  core::Config c;
  if (cfg != nullptr) {
    const size_t size = cfg->struct_size;
    if (const int st =
            check_struct_size(cfg, size, FirstVersion::kConfig, sizeof(cb_config), "cb_config");
        st != CB_OK)
      return st;
    const bool with_1_1 = LB_HAS(cb_config, size, open_jitter);
    if (!with_1_1 && size > FirstVersion::kConfig)
      return fail_at(CB_EINVAL, "struct_size",
                     "cb_config: struct_size %zu ends inside the fields added in 1.1 (%zu or %zu)",
                     size, FirstVersion::kConfig, sizeof(cb_config));
    copy_fields(*cfg, size, &c);
    if (const core::ConfigFault f = core::check(c)) return refuse(f, *cfg);
  }
  c.finish();
  *out = c;
  return CB_OK;
}

}  // namespace lazybreaker::capi
