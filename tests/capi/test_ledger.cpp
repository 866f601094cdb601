// The half-open probe ledger across many epochs: too many transitions for
// a conformance data file.
#include <doctest/doctest.h>

#include <lazybreaker/lazybreaker.h>

namespace {

struct Fixture {
  cb_registry *reg = nullptr;
  cb_handle h = 0;
  Fixture() {
    cb_registry_options o;
    cb_registry_options_init(&o);
    o.clock = CB_CLOCK_MANUAL;
    REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
    cb_config c;
    cb_config_init(&c);
    c.failure_threshold = 1;
    c.open_duration_ns = 1000;
    REQUIRE(cb_create(reg, "b", &c, &h) == CB_OK);
  }
  ~Fixture() { cb_registry_close(reg); }
  void trip() {
    cb_ticket t = 0;
    REQUIRE(cb_allow(h, &t) == CB_OK);
    REQUIRE(cb_done(h, t, CB_FAILURE) == CB_OK);
    REQUIRE(cb_state(h) == CB_STATE_OPEN);
  }
};

}  // namespace

// The ledger is tagged with 15 bits of the epoch; every trip hands the next
// half-open period an empty ledger, so one 32,768 transitions old (whose lost
// probe and long-expired lease would otherwise fill the only slot) is never
// taken for the current one.
TEST_CASE("a half-open period never inherits the probes of one 32768 epochs earlier") {
  Fixture f;
  f.trip();
  REQUIRE(cb_clock_advance(f.reg, 1000) == CB_OK);
  cb_ticket lost = 0;
  REQUIRE(cb_allow(f.h, &lost) == CB_OK);  // HALF_OPEN at epoch E; never reports
  // reset (E+1) ... then trip (+1) and half-open (+1) land on E + 32768.
  for (int i = 0; i < 32766; ++i) REQUIRE(cb_reset(f.h) == CB_OK);
  f.trip();
  REQUIRE(cb_clock_advance(f.reg, 1000) == CB_OK);
  cb_ticket probe = 0;
  CHECK(cb_allow(f.h, &probe) == CB_OK);
  CHECK(cb_state(f.h) == CB_STATE_HALF_OPEN);
}

TEST_CASE("control: one transition fewer, the same sequence probes normally") {
  Fixture f;
  f.trip();
  REQUIRE(cb_clock_advance(f.reg, 1000) == CB_OK);
  cb_ticket lost = 0;
  REQUIRE(cb_allow(f.h, &lost) == CB_OK);
  for (int i = 0; i < 32765; ++i) REQUIRE(cb_reset(f.h) == CB_OK);
  f.trip();
  REQUIRE(cb_clock_advance(f.reg, 1000) == CB_OK);
  cb_ticket probe = 0;
  CHECK(cb_allow(f.h, &probe) == CB_OK);
  CHECK(cb_state(f.h) == CB_STATE_HALF_OPEN);
}
