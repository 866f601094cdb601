// A fork while another thread is in the middle of folding a counter field
// (core::fold): in the child, where that thread does not exist, reads must
// not wait for it. The test makes that moment on purpose, through the
// library's internals (hence linked with the static library): a real fork
// lands in a fold's few instructions too rarely to wait for.
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.hpp"
#include "registry/space.hpp"

using lazybreaker::registry::Space;

TEST_CASE("a fold another thread was in the middle of at a fork does not hold up the child") {
  ManualRegistry r;
  const cb_handle h = r.create(config(5, 1000));
  for (int i = 0; i < 3; ++i) call(h, CB_SUCCESS);
  REQUIRE(lazybreaker::registry::stripes_used() >= 1);
  // Stripe 0's sequence word odd: what a fold leaves until it is done.
  std::atomic<uint64_t> &sequence = Space::sequence(0).n;
  const uint64_t before = sequence.load();
  REQUIRE((before & 1) == 0);
  sequence.store(before + 1);
  const pid_t child = fork();
  if (child == 0) {
    alarm(10);  // a child that waits for the fold dies of SIGALRM, failing the test
    cb_stats s;
    s.struct_size = sizeof s;
    _exit(cb_stats_get(h, &s) == CB_OK && s.successes == 3 && s.admitted == 3 ? 0 : 1);
  }
  sequence.store(before);
  REQUIRE(child > 0);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(stats(h).successes == 3);
}
