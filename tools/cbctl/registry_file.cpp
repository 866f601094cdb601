#include "registry_file.hpp"

#include "format.hpp"
#include "refusals.hpp"

#include <algorithm>
#include <cstdio>

namespace cbctl {

int exit_code_for(int status, bool file_context) {
  switch (status) {
    case CB_OK:
    case CB_REJECTED:
      return kExitOk;
    case CB_EINVAL:
      return kExitUsage;
    case CB_ENOENT:
      return file_context ? kExitFileUnusable : kExitNoBreaker;
    case CB_EPERM:
      return kExitFileUnusable;
    case CB_ECORRUPT:
    case CB_EVERSION:
      return kExitNotARegistry;
    case CB_EEXIST:
      return kExitExists;
    default:
      return kExitError;
  }
}

std::string library_message(const std::string &path, int status) {
  std::string message = cb_last_error_message();
  if (message.empty()) message = cb_strerror(status);
  // "cbctl: FILE: what", where the library's message for a file it could
  // not open already starts "cb_registry_open: FILE: ".
  for (const std::string &prefix : {std::string("cb_registry_open: "), path + ": "}) {
    if (message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
  }
  return message;
}

RegistryFile::RegistryFile(std::string path, const OpenRequest &request) : path_(std::move(path)) {
  cb_registry_options opts;
  cb_registry_options_init(&opts);
  opts.path = path_.c_str();
  opts.capacity = request.capacity;
  // The clock is the file's: CB_CLOCK_MONOTONIC (0) agrees with any.
  opts.clock = CB_CLOCK_MONOTONIC;
  opts.flags = (request.create ? CB_REGISTRY_CREATE : 0u) |
               (request.create && request.exclusive ? CB_REGISTRY_EXCLUSIVE : 0u) |
               (request.create && request.any_owner ? CB_REGISTRY_ANY_OWNER : 0u);
  opts.mode = request.mode;
  // cbctl reads no events: the smallest queue its process can have.
  opts.event_capacity = 1;
  int st = cb_registry_open(&opts, &reg_);
  if (st != CB_OK) throw open_refusal(path_, request, st);
}

RegistryFile::~RegistryFile() { cb_registry_close(reg_); }

void RegistryFile::fail(int status) const {
  throw Failure{exit_code_for(status, false), path_ + ": " + library_message(path_, status)};
}

cb_handle RegistryFile::lookup(const std::string &name) const {
  cb_handle h = 0;
  int st = cb_lookup(reg_, name.c_str(), &h);
  if (st == CB_ENOENT)
    throw Failure{kExitNoBreaker, path_ + ": no breaker named '" + printable(name) + "'"};
  if (st != CB_OK) fail(st);
  return h;
}

std::optional<BreakerView> read_breaker(cb_handle h) {
  BreakerView b{};
  b.handle = h;
  char name[CB_MAX_NAME_BYTES + 1];
  if (cb_name(h, name, sizeof name) != CB_OK) return std::nullopt;
  b.name = name;
  b.state = cb_state(h);
  if (b.state < 0) return std::nullopt;
  if (cb_retry_after(h, &b.retry_after_ns) != CB_OK) return std::nullopt;
  b.stats.struct_size = sizeof b.stats;
  if (cb_stats_get(h, &b.stats) != CB_OK) return std::nullopt;
  cb_config_init(&b.config);
  if (cb_config_get(h, &b.config) != CB_OK) return std::nullopt;
  return b;
}

std::vector<BreakerView> RegistryFile::breakers() const {
  std::vector<cb_handle> handles;
  size_t count = 0;
  // Breakers created between the two calls are picked up by the next round.
  for (;;) {
    int st = cb_registry_list(reg_, handles.data(), handles.size(), &count);
    if (st != CB_OK) fail(st);
    if (count <= handles.size()) break;
    handles.resize(count + count / 4 + 16);
  }
  handles.resize(count);
  std::vector<BreakerView> out;
  out.reserve(count);
  for (cb_handle h : handles) {
    if (auto b = read_breaker(h)) out.push_back(std::move(*b));
  }
  std::sort(out.begin(), out.end(), [](const BreakerView &a, const BreakerView &b) {
    if (a.name.empty() != b.name.empty()) return b.name.empty();
    if (a.name != b.name) return a.name < b.name;
    return a.handle < b.handle;
  });
  return out;
}

std::string RegistryFile::prometheus() const {
  std::string text;
  size_t needed = 0;
  int st = cb_metrics_prometheus(reg_, nullptr, 0, &needed);
  // The text grows with breakers created meanwhile: retry with room to spare.
  for (size_t slack = 1024; st == CB_OK || st == CB_ERANGE; slack *= 2) {
    text.resize(needed + slack);
    st = cb_metrics_prometheus(reg_, text.data(), text.size(), &needed);
    if (st == CB_OK) {
      text.resize(needed);
      return text;
    }
  }
  fail(st);
}

std::string display_name(const BreakerView &b) {
  if (!b.name.empty()) return b.name;
  char buf[32];
  std::snprintf(buf, sizeof buf, "#%llx", static_cast<unsigned long long>(b.handle));
  return buf;
}

}  // namespace cbctl
