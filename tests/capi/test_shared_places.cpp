// Where a shared registry's run goes in the process's breaker space, seen
// through its handles: a handle names a slot and a life, not a registry,
// and a file's lives are the file's. So a closed registry's handle must never
// come to name a breaker of a shared registry that took its place, whether it
// was a private registry's, another file's, or an earlier file's at a reused
// path. Through the public C API alone, on Linux and (under Wine) Windows.
#include <doctest/doctest.h>
#include <lazybreaker/lazybreaker.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {

constexpr int kBreakers = 12;

// A registry file path of its own, removed at the end.
struct PlacePath {
  std::string path;
  explicit PlacePath(const char *name) {
    static int n = 0;
    path = (std::filesystem::temp_directory_path() /
            ("lb-places-" + std::string(name) + "-" + std::to_string(++n) + ".lbr"))
               .string();
    std::remove(path.c_str());
  }
  ~PlacePath() { std::remove(path.c_str()); }
};

cb_registry *open_registry(const char *path, uint32_t flags = CB_REGISTRY_CREATE) {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = path;
  o.flags = path != nullptr ? flags : 0;
  o.capacity = 16;
  cb_registry *reg = nullptr;
  const int st = cb_registry_open(&o, &reg);
  const std::string why = std::string(cb_strerror(st)) + ": " + cb_last_error_message();
  INFO(why);
  REQUIRE(st == CB_OK);
  return reg;
}

// Creates kBreakers breakers named name-0... in `reg`, into `out`.
void fill(cb_registry *reg, const char *name, std::vector<cb_handle> *out) {
  cb_config cfg;
  cb_config_init(&cfg);
  for (int i = 0; i < kBreakers; ++i) {
    cb_handle h = 0;
    REQUIRE(cb_create(reg, (std::string(name) + "-" + std::to_string(i)).c_str(), &cfg, &h) ==
            CB_OK);
    out->push_back(h);
  }
}

void check_all_stale(const std::vector<cb_handle> &handles) {
  for (cb_handle h : handles) {
    CAPTURE(h);
    CHECK(cb_state(h) == CB_EHANDLE);
    cb_ticket t = 0;
    CHECK(cb_allow(h, &t) == CB_EHANDLE);
  }
}

}  // namespace

TEST_CASE("a closed private registry's handles name nothing in a shared registry after it") {
  std::vector<cb_handle> old;
  cb_registry *mine = open_registry(nullptr);
  fill(mine, "private", &old);
  REQUIRE(cb_registry_close(mine) == CB_OK);
  PlacePath file("after-private");
  cb_registry *shared = open_registry(file.path.c_str());
  std::vector<cb_handle> fresh;
  fill(shared, "shared", &fresh);  // the same slots of a fresh file, its first lives
  check_all_stale(old);
  CHECK(cb_registry_close(shared) == CB_OK);
}

TEST_CASE("a closed shared registry's handles name nothing in another file's registry after it") {
  PlacePath a("first"), b("second");
  std::vector<cb_handle> old;
  cb_registry *first = open_registry(a.path.c_str());
  fill(first, "first", &old);
  REQUIRE(cb_registry_close(first) == CB_OK);
  cb_registry *second = open_registry(b.path.c_str());
  std::vector<cb_handle> fresh;
  fill(second, "second", &fresh);
  check_all_stale(old);
  // Nor in a private registry that takes the first one's place.
  cb_registry *mine = open_registry(nullptr);
  fill(mine, "private", &fresh);
  check_all_stale(old);
  CHECK(cb_registry_close(mine) == CB_OK);
  CHECK(cb_registry_close(second) == CB_OK);
}

TEST_CASE("a file made anew at a removed file's path is another file to the space") {
  PlacePath a("remade");
  std::vector<cb_handle> old;
  cb_registry *first = open_registry(a.path.c_str());
  fill(first, "same-name", &old);
  REQUIRE(cb_registry_close(first) == CB_OK);
  REQUIRE(std::remove(a.path.c_str()) == 0);
  // Its inode (or file index) may well be the old one's: same names, first
  // lives, and still none of the old handles names a breaker.
  cb_registry *again = open_registry(a.path.c_str(), CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE);
  std::vector<cb_handle> fresh;
  fill(again, "same-name", &fresh);
  check_all_stale(old);
  CHECK(cb_registry_close(again) == CB_OK);
}

TEST_CASE("reopening the same file: an earlier handle is stale, or names its own breaker") {
  PlacePath a("reopened");
  std::vector<cb_handle> old;
  cb_registry *first = open_registry(a.path.c_str());
  fill(first, "kept", &old);
  REQUIRE(cb_registry_close(first) == CB_OK);
  cb_registry *again = open_registry(a.path.c_str(), 0);
  for (int i = 0; i < kBreakers; ++i) {
    cb_handle h = 0;
    REQUIRE(cb_lookup(again, ("kept-" + std::to_string(i)).c_str(), &h) == CB_OK);
    CAPTURE(old[size_t(i)]);
    // The same file at the same place gives the same handle: its breaker.
    if (cb_state(old[size_t(i)]) >= 0) CHECK(h == old[size_t(i)]);
  }
  CHECK(cb_registry_close(again) == CB_OK);
}
