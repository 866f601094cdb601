#include "host_files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

namespace lazybreaker::agent {
namespace {

bool in_my_groups(gid_t gid) {
  if (gid == getegid()) return true;
  const int n = getgroups(0, nullptr);
  if (n <= 0) return false;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  const int got = getgroups(n, groups.data());
  for (int i = 0; i < got; ++i)
    if (groups[static_cast<size_t>(i)] == gid) return true;
  return false;
}

// The owner and mode rule the library applies to a create (docs/
// shared-registries.md, "Permissions"), applied by the agent to the files
// it is given: a file some other user planted at the path, or that anyone
// may write, could be made to say anything to the fleet. A group of the
// agent's is a grant as deliberate as ownership: a service's user puts its
// file in the agent's group (docs/fleet.md, "Deployment") so that the
// agent runs as a user of its own, not as root nor as every service.
std::string refused_owner(const std::string &path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return "";  // the open says why
  if (S_ISLNK(st.st_mode)) return path + ": a symbolic link (give the file's own path)";
  if (st.st_uid != geteuid() && st.st_uid != 0 && !in_my_groups(st.st_gid))
    return path + ": owned by uid " + std::to_string(st.st_uid) + " and gid " +
           std::to_string(st.st_gid) +
           ": neither this user nor root, nor a group of this user (--any-owner to use it)";
  if ((st.st_mode & S_IWOTH) != 0) return path + ": writable by every user (--any-owner to use it)";
  return "";
}

uint64_t sub(uint64_t now, uint64_t before) { return now >= before ? now - before : 0; }

}  // namespace

HostFiles::HostFiles(std::vector<std::string> paths, bool any_owner) : any_owner_(any_owner) {
  for (std::string &p : paths) paths_.push_back(File{std::move(p), nullptr, {}, false, {}});
}

HostFiles::~HostFiles() {
  for (File &f : paths_)
    if (f.reg != nullptr) cb_registry_close(f.reg);
}

std::string HostFiles::open_one(File &f) {
  f.missing = false;
  if (!any_owner_)
    if (std::string why = refused_owner(f.path); !why.empty()) return why;
  cb_registry_options opts;
  cb_registry_options_init(&opts);
  opts.path = f.path.c_str();
  opts.capacity = 0;                // the file's
  opts.clock = CB_CLOCK_MONOTONIC;  // agrees with any file's
  opts.event_capacity = 1;          // the agent polls; it reads no events
  const int st = cb_registry_open(&opts, &f.reg);
  if (st == CB_OK) return "";
  f.reg = nullptr;
  f.missing = st == CB_ENOENT;
  if (f.missing) return f.path + ": no such file yet (a service creates it)";
  return f.path + ": " + cb_last_error_message();
}

std::vector<std::string> HostFiles::open_missing() {
  std::vector<std::string> news;
  for (File &f : paths_) {
    if (f.reg != nullptr) continue;
    std::string why = open_one(f);
    if (!why.empty() && why != f.last_error) news.push_back(why);
    f.last_error = why;
  }
  return news;
}

bool HostFiles::only_missing() const {
  for (const File &f : paths_)
    if (f.reg == nullptr && !f.missing) return false;
  return true;
}

bool HostFiles::all_open() const {
  for (const File &f : paths_)
    if (f.reg == nullptr) return false;
  return true;
}

uint64_t HostFiles::clock_now(const LocalBreaker &b) const {
  uint64_t ns = 0;
  cb_clock_now(paths_[b.file].reg, &ns);
  return ns;
}

void HostFiles::refresh(LocalBreaker &b) const {
  const int s = cb_state(b.handle);
  if (s >= 0) b.state = s;
  cb_stats stats;
  stats.struct_size = sizeof stats;
  if (cb_stats_get(b.handle, &stats) == CB_OK) b.trips = stats.trips;
  cb_retry_after(b.handle, &b.retry_after_ns);
}

void HostFiles::read_file(size_t fi, BreakersByName *into) {
  cb_registry *reg = paths_[fi].reg;
  if (reg == nullptr) return;
  size_t count = 0;
  while (cb_registry_list(reg, handles_.data(), handles_.size(), &count) == CB_OK &&
         count > handles_.size())
    handles_.resize(count + 256);
  for (size_t i = 0; i < count && i < handles_.size(); ++i) {
    const std::string *name = name_of(fi, handles_[i]);
    if (name == nullptr) continue;  // anonymous, or destroyed meanwhile
    LocalBreaker b;
    b.name = *name;
    b.file = fi;
    b.handle = handles_[i];
    const int s = cb_state(b.handle);
    cb_stats stats;
    stats.struct_size = sizeof stats;
    if (s < 0 || cb_stats_get(b.handle, &stats) != CB_OK) continue;  // destroyed meanwhile
    b.state = s;
    b.trips = stats.trips;
    b.counts = {stats.admitted, stats.rejected, stats.successes, stats.failures};
    cb_retry_after(b.handle, &b.retry_after_ns);
    (*into)[b.name].push_back(b);
  }
}

// A handle names one breaker for its whole life (a new breaker in the
// slot has another handle), so each name is read once.
const std::string *HostFiles::name_of(size_t file, cb_handle h) {
  auto &names = paths_[file].names;
  if (auto it = names.find(h); it != names.end()) return it->second.empty() ? nullptr : &it->second;
  char name[CB_MAX_NAME_BYTES + 1];
  if (cb_name(h, name, sizeof name) != CB_OK) return nullptr;
  if (names.size() > 4 * handles_.size()) names.clear();  // destroyed breakers' names
  return names.emplace(h, name).first->second.empty() ? nullptr : &names[h];
}

LocalChange HostFiles::change_of(LocalBreaker &b) const {
  const LocalBreaker *old = nullptr;
  if (auto it = by_name_.find(b.name); it != by_name_.end())
    for (const LocalBreaker &o : it->second)
      if (o.file == b.file && o.handle == b.handle) old = &o;
  LocalChange c{&b, old != nullptr ? old->state : -1, false, old == nullptr, {}};
  if (old != nullptr) {
    c.tripped = b.trips > old->trips && b.state == CB_STATE_OPEN;
    c.delta = {sub(b.counts.admitted, old->counts.admitted),
               sub(b.counts.rejected, old->counts.rejected),
               sub(b.counts.successes, old->counts.successes),
               sub(b.counts.failures, old->counts.failures)};
  } else if (polled_before_) {  // created since: all its calls are new
    c.delta = b.counts;
  }
  return c;
}

std::vector<LocalChange> HostFiles::poll() {
  BreakersByName next;
  next.reserve(by_name_.size());
  for (size_t fi = 0; fi < paths_.size(); ++fi) read_file(fi, &next);
  std::vector<LocalChange> changes;
  for (auto &[name, list] : next)
    for (LocalBreaker &b : list) changes.push_back(change_of(b));
  by_name_ = std::move(next);  // a move keeps the nodes: the changes' pointers hold
  polled_before_ = true;
  return changes;
}

}  // namespace lazybreaker::agent
