// Bad input gets its own error code and a message, and changes nothing else.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <lazybreaker/fastpath.h>

#include "fixture.hpp"

namespace {

// A breaker whose state and counters must survive every bad call below.
struct Bystander {
  cb_handle h;
  cb_stats before;
  explicit Bystander(ManualRegistry &r) : h(r.create(config(2, 1000), "bystander")) {
    call(h, CB_FAILURE);
    before = stats(h);
  }
  void unchanged() const {
    const cb_stats now = stats(h);
    CHECK(cb_state(h) == CB_STATE_CLOSED);
    CHECK(std::memcmp(&now, &before, sizeof now) == 0);
  }
};

bool message_mentions(const char *what) {
  return std::strstr(cb_last_error_message(), what) != nullptr;
}

}  // namespace

TEST_CASE("every status has a name, the statuses run without gaps, and unknown ones say so") {
  // The range is the header's own list (lazybreaker/lists.h), not a copy.
#define LB_STATUS_CODE(code, text) code,
  static constexpr int kStatuses[] = {CB_STATUS_LIST(LB_STATUS_CODE)};
#undef LB_STATUS_CODE
  int lowest = 0, highest = 0;
  for (const int s : kStatuses) {
    lowest = std::min(lowest, s);
    highest = std::max(highest, s);
    CHECK(std::string(cb_strerror(s)).rfind("CB_", 0) == 0);
  }
  CHECK(highest == CB_REJECTED);
  CHECK(size_t(highest - lowest + 1) == std::size(kStatuses));
  CHECK(std::string(cb_strerror(lowest - 1)) == "unknown status");
  CHECK(std::string(cb_strerror(highest + 1)) == "unknown status");
  CHECK(std::string(cb_strerror(-1000)) == "unknown status");
  CHECK(cb_last_error_message() != nullptr);
}

TEST_CASE("NULL out-pointers are CB_EINVAL") {
  ManualRegistry r;
  Bystander b(r);
  CHECK(cb_allow(b.h, nullptr) == CB_EINVAL);
  CHECK(message_mentions("ticket"));
  CHECK(cb_retry_after(b.h, nullptr) == CB_EINVAL);
  CHECK(cb_stats_get(b.h, nullptr) == CB_EINVAL);
  CHECK(cb_create(r.reg, "x", nullptr, nullptr) == CB_EINVAL);
  CHECK(cb_lookup(r.reg, "bystander", nullptr) == CB_EINVAL);
  CHECK(cb_registry_open(nullptr, nullptr) == CB_EINVAL);
  CHECK(cb_config_init_size(nullptr, sizeof(cb_config)) == CB_EINVAL);
  CHECK(cb_registry_options_init_size(nullptr, sizeof(cb_registry_options)) == CB_EINVAL);
  CHECK(cb_clock_now(r.reg, nullptr) == CB_EINVAL);
  CHECK(cb_name(b.h, nullptr, 10) == CB_EINVAL);
  b.unchanged();
}

TEST_CASE("handle 0, random handles and handles from another registry are CB_EHANDLE") {
  ManualRegistry r;
  Bystander b(r);
  cb_ticket t = 0;
  CHECK(cb_allow(0, &t) == CB_EHANDLE);
  CHECK(message_mentions("handle"));
  CHECK(cb_done(0, 1, CB_SUCCESS) == CB_EHANDLE);
  CHECK(cb_state(0) == CB_EHANDLE);
  CHECK(cb_destroy(0) == CB_EHANDLE);
  CHECK(cb_force_open(0) == CB_EHANDLE);
  std::mt19937_64 rng(42);
  for (int i = 0; i < 100000; ++i) {
    const cb_handle h = rng();
    if (h == b.h) continue;
    REQUIRE(cb_allow(h, &t) == CB_EHANDLE);
    REQUIRE(cb_done(h, t, CB_FAILURE) == CB_EHANDLE);
    REQUIRE(cb_state(h) == CB_EHANDLE);
    REQUIRE(cb_reset(h) == CB_EHANDLE);
    REQUIRE(cb_destroy(h) == CB_EHANDLE);
  }
  // The same slot index with another incarnation is another breaker.
  CHECK(cb_state(b.h + (uint64_t(1) << 24)) == CB_EHANDLE);
  b.unchanged();
}

TEST_CASE("handles that look like real ones but name no breaker are CB_EHANDLE, even as tickets") {
  ManualRegistry r;
  Bystander b(r);
  const cb_ticket real = admit(b.h);
  // A handle's low 24 bits are its slot, the next 20 its incarnation: the
  // bystander's neighbours (never used), slots no registry holds, and the
  // bystander's slot in other lives.
  const uint64_t slot_bits = 0xffffff, life = uint64_t(1) << 24;
  std::vector<cb_handle> lookalikes;
  for (uint64_t slot : {uint64_t(1), uint64_t(2), uint64_t(63), uint64_t(64), uint64_t(0x7ffff),
                        uint64_t(0xfffff0), slot_bits})
    lookalikes.push_back((b.h & ~slot_bits) | ((b.h + slot) & slot_bits));
  for (uint64_t lives : {uint64_t(1), uint64_t(2), uint64_t(0xfffff)})
    lookalikes.push_back(b.h + lives * life);
  for (const cb_handle h : lookalikes) {
    CAPTURE(h);
    cb_ticket t = 0;
    CHECK(cb_allow(h, &t) == CB_EHANDLE);
    CHECK(cb_done(h, h, CB_SUCCESS) == CB_EHANDLE);
    CHECK(cb_done(h, 0, CB_SUCCESS) == CB_EHANDLE);
    CHECK(cb_done(h, real, CB_SUCCESS) == CB_EHANDLE);
    CHECK(cb_state(h) == CB_EHANDLE);
    CHECK(cb_destroy(h) == CB_EHANDLE);
  }
  // A quiet breaker's ticket is its state word plus its handle. That word,
  // reported with values that are not handles but name the breaker's slot
  // in their low 24 bits, is refused.
  const cb_handle quiet = r.create(config(5, 1000), "quiet");
  const uint64_t word = admit(quiet) - quiet;
  for (const cb_handle h : {quiet & slot_bits, (quiet & slot_bits) | (uint64_t(1) << 63),
                            quiet ^ (uint64_t(1) << 60), quiet | (uint64_t(0xfff) << 44)}) {
    CAPTURE(h);
    CHECK(cb_done(h, h + word, CB_SUCCESS) == CB_EHANDLE);
    CHECK(cb_done(h, word, CB_SUCCESS) == CB_EHANDLE);
  }
  CHECK(stats(quiet).successes == 0);
  REQUIRE(cb_done(b.h, real, CB_IGNORED) == CB_OK);
  const cb_stats s = stats(b.h);
  CHECK(s.ignored == b.before.ignored + 1);
  CHECK(s.admitted == b.before.admitted + 1);
  CHECK(cb_state(b.h) == CB_STATE_CLOSED);
}

TEST_CASE("a destroyed breaker's handle stays stale after its slot is reused") {
  ManualRegistry r(2);
  Bystander b(r);
  const cb_handle old = r.create(config(1, 1000), "reused");
  REQUIRE(cb_destroy(old) == CB_OK);
  CHECK(cb_destroy(old) == CB_EHANDLE);
  const cb_handle fresh = r.create(config(1, 1000), "reused");
  CHECK(fresh != old);
  cb_ticket t = 0;
  CHECK(cb_allow(old, &t) == CB_EHANDLE);
  CHECK(cb_done(old, t, CB_FAILURE) == CB_EHANDLE);
  CHECK(cb_state(old) == CB_EHANDLE);
  CHECK(cb_force_open(old) == CB_EHANDLE);
  CHECK(cb_state(fresh) == CB_STATE_CLOSED);
  b.unchanged();
}

TEST_CASE("a ticket from a breaker's earlier life moves nothing in its next") {
  ManualRegistry r(2);
  Bystander b(r);
  const cb_handle old = r.create(config(1, 1000), "again");
  const cb_ticket t = admit(old);
  REQUIRE(cb_destroy(old) == CB_OK);
  const cb_handle fresh = r.create(config(1, 1000), "again");
  CHECK(cb_done(fresh, t, CB_FAILURE) == CB_OK);
  CHECK(cb_state(fresh) == CB_STATE_CLOSED);
}

TEST_CASE("handles into a closed registry stay stale however many registries open later") {
  cb_handle h = 0;
  {
    ManualRegistry r;
    h = r.create(config(1, 1000), "gone");
  }
  for (int i = 0; i < 50; ++i) {
    ManualRegistry later;
    later.create(config(1, 1000), "gone");
    CHECK(cb_state(h) == CB_EHANDLE);
  }
}

TEST_CASE("an unknown outcome is CB_EINVAL and changes nothing") {
  ManualRegistry r;
  Bystander b(r);
  const cb_ticket t = admit(b.h);
  const cb_stats before = stats(b.h);
  CHECK(cb_done(b.h, t, 7) == CB_EINVAL);
  CHECK(message_mentions("outcome"));
  CHECK(cb_done(b.h, t, -1) == CB_EINVAL);
  const cb_stats after = stats(b.h);
  CHECK(std::memcmp(&before, &after, sizeof before) == 0);
  CHECK(cb_done(b.h, t, CB_SUCCESS) == CB_OK);
}

TEST_CASE("a ticket cb_allow never issues is CB_EINVAL") {
  ManualRegistry r;
  Bystander b(r);
  CHECK(cb_done(b.h, 0, CB_FAILURE) == CB_EINVAL);
  CHECK(cb_done(b.h, 0x12340, CB_FAILURE) == CB_EINVAL);  // no state a ticket is issued in
  CHECK(cb_done(b.h, 0x12342, CB_FAILURE) == CB_EINVAL);
  CHECK(message_mentions("ticket"));
  b.unchanged();
}

TEST_CASE("each out-of-range config field is CB_EINVAL with a message naming it") {
  ManualRegistry r;
  Bystander b(r);
  struct Case {
    const char *field;
    void (*spoil)(cb_config &);
  };
  const Case cases[] = {
      {"failure_threshold", [](cb_config &c) { c.failure_threshold = 0; }},
      {"failure_threshold",
       [](cb_config &c) { c.failure_threshold = CB_MAX_FAILURE_THRESHOLD + 1; }},
      {"half_open_max_calls", [](cb_config &c) { c.half_open_max_calls = 0; }},
      {"half_open_max_calls",
       [](cb_config &c) { c.half_open_max_calls = CB_MAX_HALF_OPEN_CALLS + 1; }},
      {"half_open_success_threshold", [](cb_config &c) { c.half_open_success_threshold = 0; }},
      {"half_open_success_threshold",
       [](cb_config &c) { c.half_open_success_threshold = CB_MAX_HALF_OPEN_SUCCESSES + 1; }},
      {"open_duration_ns", [](cb_config &c) { c.open_duration_ns = 0; }},
      {"open_duration_ns", [](cb_config &c) { c.open_duration_ns = CB_MAX_DURATION_NS + 1; }},
      {"half_open_timeout_ns", [](cb_config &c) { c.half_open_timeout_ns = UINT64_MAX; }},
      {"struct_size", [](cb_config &c) { c.struct_size = sizeof(size_t); }},
  };
  for (const Case &k : cases) {
    CAPTURE(k.field);
    cb_config c;
    cb_config_init(&c);
    k.spoil(c);
    cb_handle h = 0;
    CHECK(cb_create(r.reg, "spoilt", &c, &h) == CB_EINVAL);
    CHECK(message_mentions(k.field));
    CHECK(h == 0);
  }
  cb_handle h = 0;
  CHECK(cb_lookup(r.reg, "spoilt", &h) == CB_ENOENT);
  b.unchanged();
}

TEST_CASE("a config from a newer header is accepted only if its unknown tail is zero") {
  ManualRegistry r;
  struct Newer {
    cb_config base;
    uint64_t future_field;
  } n;
  REQUIRE(cb_config_init_size(&n.base, sizeof n) == CB_OK);
  CHECK(n.future_field == 0);
  CHECK(n.base.struct_size == sizeof n);
  cb_handle h = 0;
  CHECK(cb_create(r.reg, nullptr, &n.base, &h) == CB_OK);
  n.future_field = 1;
  CHECK(cb_create(r.reg, nullptr, &n.base, &h) == CB_EINVAL);
  CHECK(message_mentions("struct_size"));
}

TEST_CASE("cb_config_init_size never writes past a smaller caller's struct") {
  unsigned char buf[sizeof(cb_config) + 16];
  std::memset(buf, 0xAB, sizeof buf);
  CHECK(cb_config_init_size(reinterpret_cast<cb_config *>(buf), sizeof(cb_config)) == CB_OK);
  for (size_t i = sizeof(cb_config); i < sizeof buf; ++i) REQUIRE(buf[i] == 0xAB);
  CHECK(cb_config_init_size(reinterpret_cast<cb_config *>(buf), 8) == CB_EINVAL);
}

TEST_CASE("cb_stats_get never writes past the caller's struct_size") {
  ManualRegistry r;
  Bystander b(r);
  unsigned char buf[sizeof(cb_stats) + 16];
  std::memset(buf, 0xAB, sizeof buf);
  auto *s = reinterpret_cast<cb_stats *>(buf);
  s->struct_size = sizeof(cb_stats);
  REQUIRE(cb_stats_get(b.h, s) == CB_OK);
  CHECK(s->failures == 1);
  for (size_t i = sizeof(cb_stats); i < sizeof buf; ++i) REQUIRE(buf[i] == 0xAB);
  s->struct_size = 4;
  CHECK(cb_stats_get(b.h, s) == CB_EINVAL);
}

TEST_CASE("a struct_size larger than any struct can be is CB_EINVAL, nothing read or written") {
  // A struct whose struct_size nobody set: what the stack held. Trusting
  // it would zero or scan megabytes past the caller's struct (ASan sees
  // any byte of that).
  const size_t garbage = size_t(1) << 40;
  ManualRegistry r;
  Bystander b(r);
  auto refused = [](int st, const char *what) {
    CHECK(st == CB_EINVAL);
    CHECK(message_mentions(what));
    CHECK(message_mentions("larger than any version"));
  };
  cb_stats s;
  s.struct_size = garbage;
  refused(cb_stats_get(b.h, &s), "cb_stats_get");
  CHECK(std::string(cb_last_error_field()) == "struct_size");
  cb_config c;
  c.struct_size = garbage;
  refused(cb_config_get(b.h, &c), "cb_config_get");
  refused(cb_config_init_size(&c, garbage), "cb_config_init_size");
  cb_registry_options o;
  refused(cb_registry_options_init_size(&o, garbage), "cb_registry_options_init_size");
  cb_config_init(&c);
  c.struct_size = garbage;
  cb_handle h = 0;
  refused(cb_create(r.reg, "garbage", &c, &h), "cb_config");
  cb_registry_options_init(&o);
  o.struct_size = garbage;
  cb_registry *other = nullptr;
  refused(cb_registry_open(&o, &other), "cb_registry_options");
  CHECK(other == nullptr);
  cb_event e[2];
  e[0].struct_size = garbage;
  size_t n = 7;
  refused(cb_events_poll(r.reg, e, 2, &n), "cb_events_poll");
  CHECK(n == 7);
  cb_fastpath fp;
  fp.struct_size = garbage;
  refused(cb_fastpath_describe(&fp), "cb_fastpath_describe");
  cb_fastpath_cells cells;
  cells.struct_size = garbage;
  CHECK(cb_fastpath_thread_cells(&cells) == CB_EINVAL);
  CHECK(cb_fastpath_claim_cells(&cells) == CB_EINVAL);
  CHECK(h == 0);
  b.unchanged();
}

TEST_CASE("names that are empty, too long or not UTF-8 are CB_EINVAL") {
  ManualRegistry r;
  Bystander b(r);
  cb_handle h = 0;
  const std::string longest(CB_MAX_NAME_BYTES, 'n');
  const std::string too_long(CB_MAX_NAME_BYTES + 1, 'n');
  CHECK(cb_create(r.reg, "", nullptr, &h) == CB_EINVAL);
  CHECK(message_mentions("empty"));
  CHECK(cb_create(r.reg, too_long.c_str(), nullptr, &h) == CB_EINVAL);
  CHECK(message_mentions("longer"));
  const char *bad_utf8[] = {"\xff",    "a\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                            "\xe2\x82"};
  for (const char *n : bad_utf8) {
    CHECK(cb_create(r.reg, n, nullptr, &h) == CB_EINVAL);
    CHECK(message_mentions("UTF-8"));
  }
  CHECK(cb_create(r.reg, longest.c_str(), nullptr, &h) == CB_OK);
  CHECK(cb_create(r.reg, "payment-gateway/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", nullptr, &h) ==
        CB_OK);
  CHECK(cb_lookup(r.reg, "", &h) == CB_EINVAL);
  CHECK(cb_lookup(r.reg, nullptr, &h) == CB_EINVAL);
  b.unchanged();
}

TEST_CASE("bad registry options are CB_EINVAL naming the field") {
  cb_registry *reg = nullptr;
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.clock = 9;
  CHECK(cb_registry_open(&o, &reg) == CB_EINVAL);
  CHECK(message_mentions("clock"));
  cb_registry_options_init(&o);
  o.capacity = CB_MAX_CAPACITY + 1;
  CHECK(cb_registry_open(&o, &reg) == CB_EINVAL);
  CHECK(message_mentions("capacity"));
  cb_registry_options_init(&o);
  o.path = "";
  CHECK(cb_registry_open(&o, &reg) == CB_EINVAL);
  CHECK(message_mentions("path"));
  cb_registry_options_init(&o);
  o.path = "/nonexistent-dir/never-created";
  o.flags = 0x80 | CB_REGISTRY_CREATE;
  CHECK(cb_registry_open(&o, &reg) == CB_EINVAL);
  CHECK(message_mentions("flags"));
  o.flags = CB_REGISTRY_EXCLUSIVE;
  CHECK(cb_registry_open(&o, &reg) == CB_EINVAL);
  CHECK(message_mentions("CB_REGISTRY_CREATE"));
  o.flags = CB_REGISTRY_CREATE;
  o.mode = 01777;
  CHECK(cb_registry_open(&o, &reg) == CB_EINVAL);
  CHECK(message_mentions("mode"));
  cb_registry_options_init(&o);
  o.struct_size = 3;
  CHECK(cb_registry_open(&o, &reg) == CB_EINVAL);
  CHECK(reg == nullptr);
}

TEST_CASE("closed, garbage and default registries are refused where they do not belong") {
  cb_registry *reg = nullptr;
  REQUIRE(cb_registry_open(nullptr, &reg) == CB_OK);
  REQUIRE(cb_registry_close(reg) == CB_OK);
  CHECK(cb_registry_close(reg) == CB_EINVAL);
  cb_handle h = 0;
  CHECK(cb_create(reg, nullptr, nullptr, &h) == CB_EINVAL);
  CHECK(cb_clock_advance(reg, 1) == CB_EINVAL);
  alignas(16) static char not_a_registry[64];
  CHECK(cb_create(reinterpret_cast<cb_registry *>(not_a_registry), nullptr, nullptr, &h) ==
        CB_EINVAL);
  CHECK(cb_registry_close(cb_default_registry()) == CB_EINVAL);
  CHECK(cb_registry_close(nullptr) == CB_OK);
}

TEST_CASE("advancing a monotonic clock or past the end of time is CB_EINVAL") {
  CHECK(cb_clock_advance(nullptr, 1) == CB_EINVAL);
  CHECK(message_mentions("CB_CLOCK_MANUAL"));
  ManualRegistry r;
  r.advance(10);
  CHECK(cb_clock_advance(r.reg, UINT64_MAX) == CB_EINVAL);
  uint64_t now = 0;
  REQUIRE(cb_clock_now(r.reg, &now) == CB_OK);
  CHECK(now == 10);
}

TEST_CASE("cb_name copies the name, or refuses a buffer too small") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000), "svc-a");
  char buf[CB_MAX_NAME_BYTES + 1];
  REQUIRE(cb_name(h, buf, sizeof buf) == CB_OK);
  CHECK(std::string(buf) == "svc-a");
  CHECK(cb_name(h, buf, 5) == CB_EINVAL);
  const cb_handle anon = r.create(config(1, 1000));
  REQUIRE(cb_name(anon, buf, sizeof buf) == CB_OK);
  CHECK(std::string(buf).empty());
}

TEST_CASE("the library reports the version the header promises") {
  CHECK(cb_version_number() == CB_VERSION_NUMBER);
  CHECK(std::string(cb_version_string()) == CB_VERSION_STRING);
}

TEST_CASE("a rejected call leaves the ticket untouched") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000));
  call(h, CB_FAILURE);
  cb_ticket t = 0x1234;
  REQUIRE(cb_allow(h, &t) == CB_REJECTED);
  CHECK(t == 0x1234);
  REQUIRE(cb_force_open(h) == CB_OK);
  REQUIRE(cb_allow(h, &t) == CB_REJECTED);
  CHECK(t == 0x1234);
}
