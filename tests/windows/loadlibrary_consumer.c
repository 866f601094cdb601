/* A Windows program that knows lazybreaker only as lazybreaker.dll: it
 * loads it with LoadLibraryW, resolves every function the public headers
 * declare with GetProcAddress (declared_functions.h, made from the headers
 * at configure time), then, on a manual-clock registry, trips a breaker,
 * sees a call rejected, and recovers it through a probe. No import
 * library, no header-declared prototypes called directly. */
#include <windows.h>

#include <stdio.h>
#include <string.h>

#include "lazybreaker/lazybreaker.h"

static const char *const kDeclared[] = {
#include "declared_functions.h"
};

static HMODULE g_dll;
static int g_failures;

static FARPROC must_resolve(const char *name) {
  FARPROC f = GetProcAddress(g_dll, name);
  if (f == NULL) {
    fprintf(stderr, "FAIL: GetProcAddress(%s): error %lu\n", name, (unsigned long)GetLastError());
    ++g_failures;
  }
  return f;
}

#define CHECK(cond)                                             \
  do {                                                          \
    if (!(cond)) {                                              \
      fprintf(stderr, "FAIL: %s (line %d)\n", #cond, __LINE__); \
      ++g_failures;                                             \
    }                                                           \
  } while (0)

/* The functions the trip uses, as the DLL gives them. */
#define LB_FN(name) static __typeof__(&name) p_##name;
// clang-format off
#define LB_FUNCTIONS(X)                                                          \
  X(cb_registry_options_init_size) X(cb_registry_open) X(cb_registry_close)      \
  X(cb_config_init_size) X(cb_create) X(cb_allow) X(cb_done) X(cb_state)         \
  X(cb_clock_advance) X(cb_version_string) X(cb_last_error_message) X(cb_lookup)
// clang-format on
LB_FUNCTIONS(LB_FN)

static void trip_reject_recover(void) {
  cb_registry_options o;
  p_cb_registry_options_init_size(&o, sizeof o);
  o.clock = CB_CLOCK_MANUAL;
  o.capacity = 16;
  cb_registry *reg = NULL;
  CHECK(p_cb_registry_open(&o, &reg) == CB_OK);
  if (reg == NULL) return;
  cb_config cfg;
  p_cb_config_init_size(&cfg, sizeof cfg);
  cfg.failure_threshold = 3;
  cfg.open_duration_ns = 1000000000ull;
  cb_handle h = 0;
  CHECK(p_cb_create(reg, "windows-consumer", &cfg, &h) == CB_OK);
  cb_ticket t;
  for (int i = 0; i < 3; ++i) {
    CHECK(p_cb_allow(h, &t) == CB_OK);
    CHECK(p_cb_done(h, t, CB_FAILURE) == CB_OK);
  }
  CHECK(p_cb_state(h) == CB_STATE_OPEN);   /* the trip */
  CHECK(p_cb_allow(h, &t) == CB_REJECTED); /* the rejection */
  CHECK(p_cb_clock_advance(reg, 1000000000ull) == CB_OK);
  CHECK(p_cb_allow(h, &t) == CB_OK); /* the probe */
  CHECK(p_cb_state(h) == CB_STATE_HALF_OPEN);
  CHECK(p_cb_done(h, t, CB_SUCCESS) == CB_OK);
  CHECK(p_cb_state(h) == CB_STATE_CLOSED); /* the recovery */
  CHECK(p_cb_registry_close(reg) == CB_OK);
}

/* A registry file in the temporary folder: a breaker tripped through one
 * registry is OPEN through another opened on the file, and after both
 * closed, in a third. */
static void shared_file_seen_twice(void) {
  char path[MAX_PATH + 64];
  const DWORD len = GetTempPathA(MAX_PATH, path);
  CHECK(len > 0 && len < MAX_PATH);
  snprintf(path + len, 64, "lazybreaker-consumer-%lu.lbr", (unsigned long)GetCurrentProcessId());
  DeleteFileA(path); /* Wine reuses process ids: a run that died may have left it */
  cb_registry_options o;
  p_cb_registry_options_init_size(&o, sizeof o);
  o.path = path;
  o.flags = CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE;
  o.capacity = 16;
  cb_registry *a = NULL, *b = NULL, *c = NULL;
  CHECK(p_cb_registry_open(&o, &a) == CB_OK);
  o.flags = 0;
  CHECK(p_cb_registry_open(&o, &b) == CB_OK);
  if (a == NULL || b == NULL) {
    fprintf(stderr, "  %s: %s\n", path, p_cb_last_error_message());
    if (a != NULL) p_cb_registry_close(a);
    if (b != NULL) p_cb_registry_close(b);
    DeleteFileA(path);
    return;
  }
  cb_config cfg;
  p_cb_config_init_size(&cfg, sizeof cfg);
  cfg.failure_threshold = 1;
  cb_handle ha = 0, hb = 0, hc = 0;
  cb_ticket t;
  CHECK(p_cb_create(a, "shared", &cfg, &ha) == CB_OK);
  CHECK(p_cb_allow(ha, &t) == CB_OK);
  CHECK(p_cb_done(ha, t, CB_FAILURE) == CB_OK);
  CHECK(p_cb_lookup(b, "shared", &hb) == CB_OK);
  CHECK(p_cb_state(hb) == CB_STATE_OPEN);
  CHECK(p_cb_allow(hb, &t) == CB_REJECTED);
  CHECK(p_cb_registry_close(a) == CB_OK);
  CHECK(p_cb_registry_close(b) == CB_OK);
  CHECK(p_cb_registry_open(&o, &c) == CB_OK);
  CHECK(c != NULL && p_cb_lookup(c, "shared", &hc) == CB_OK && p_cb_state(hc) == CB_STATE_OPEN);
  if (c != NULL) CHECK(p_cb_registry_close(c) == CB_OK);
  CHECK(DeleteFileA(path) != 0);
}

int main(void) {
  g_dll = LoadLibraryW(L"lazybreaker.dll");
  if (g_dll == NULL) {
    fprintf(stderr, "FAIL: LoadLibraryW(lazybreaker.dll): error %lu\n",
            (unsigned long)GetLastError());
    return 1;
  }
  const size_t declared = sizeof kDeclared / sizeof kDeclared[0];
  for (size_t i = 0; i < declared; ++i) must_resolve(kDeclared[i]);
#define LB_RESOLVE(name) p_##name = (__typeof__(&name))(void (*)(void))must_resolve(#name);
  LB_FUNCTIONS(LB_RESOLVE)
  if (g_failures != 0) return 1;
  trip_reject_recover();
  shared_file_seen_twice();
  printf("lazybreaker %s: %u functions resolved; trip, rejection, recovery, shared file: %s\n",
         p_cb_version_string(), (unsigned)declared, g_failures == 0 ? "ok" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
