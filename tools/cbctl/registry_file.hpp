// A registry file as cbctl sees it: opened through the public C ABI only,
// closed on scope exit, and every failure turned into a Failure that
// carries the file's name, the library's message and cbctl's exit status.
#pragma once

#include <lazybreaker/lazybreaker.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cbctl {

// cbctl's exit statuses: docs/cbctl.md and cbctl.1 list them, and
// tests/cbctl pins each one.
enum Exit : int {
  kExitOk = 0,
  kExitError = 1,         // any other failure: I/O, a full registry, a bug
  kExitUsage = 2,         // bad arguments, or a value the library refuses (CB_EINVAL)
  kExitNoBreaker = 3,     // no breaker has that name (CB_ENOENT from a lookup)
  kExitFileUnusable = 4,  // the file is missing or may not be opened (CB_ENOENT, CB_EPERM)
  kExitNotARegistry = 5,  // not a registry file, another layout, corrupt
  kExitExists = 6,        // the name (or, with --exclusive, the file) is taken
  kExitRedisDown = 7,     // fleet: Redis unreachable, timed out, or refused the credentials
  kExitRedisError = 8,    // fleet: Redis answered with an error or data that is not the fleet's
};

// What ends a command: printed as "cbctl: <message>", then exit(exit_code).
struct Failure {
  int exit_code;
  std::string message;
};

// The exit status for a status of cb_registry_open (file_context) or of a
// call on a breaker or a name (a CB_ENOENT there is a missing breaker).
int exit_code_for(int status, bool file_context);

// One breaker's figures, read a moment apart from the next breaker's.
struct BreakerView {
  std::string name;  // "" for an anonymous breaker
  cb_handle handle;
  int state;
  uint64_t retry_after_ns;  // UINT64_MAX in FORCED_OPEN
  cb_stats stats;
  cb_config config;  // as created (cb_config_get)
};

// How to open: an existing file (the default), or create it.
struct OpenRequest {
  bool create = false;
  bool exclusive = false;
  // With create: use an existing file whoever owns it (CB_REGISTRY_ANY_OWNER).
  bool any_owner = false;
  uint32_t capacity = 0;      // 0: the file's (or the library's default when creating)
  uint32_t mode = 0;          // 0: 0600
  bool offer_create = false;  // a missing file's message names --create-file
};

class RegistryFile {
 public:
  explicit RegistryFile(std::string path, const OpenRequest &request = {});
  ~RegistryFile();
  RegistryFile(const RegistryFile &) = delete;
  RegistryFile &operator=(const RegistryFile &) = delete;

  cb_registry *get() const { return reg_; }
  const std::string &path() const { return path_; }

  // The breaker named `name`; a Failure (kExitNoBreaker) if there is none.
  cb_handle lookup(const std::string &name) const;
  // Every live breaker, sorted by name (anonymous ones last, by handle).
  std::vector<BreakerView> breakers() const;
  // The Prometheus text of every breaker.
  std::string prometheus() const;

  // Throws the Failure for a failed library call on this file: "FILE: "
  // followed by library_message().
  [[noreturn]] void fail(int status) const;

 private:
  std::string path_;
  cb_registry *reg_ = nullptr;
};

// The library's message for a failed call on the file at `path`
// (cb_last_error_message(), or cb_strerror when there is none), without
// the path it may start with.
std::string library_message(const std::string &path, int status);

// A breaker's figures, or nothing when it was destroyed meanwhile.
std::optional<BreakerView> read_breaker(cb_handle h);

// The name shown for a breaker: its own, or "#<handle in hex>" (as the
// Prometheus text labels an anonymous breaker).
std::string display_name(const BreakerView &b);

}  // namespace cbctl
