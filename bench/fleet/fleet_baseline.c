/* The fleet bench's per-call figures (bench/fleet/fleet_bench.py prints them).
 *
 *   fleet_baseline store PORT CALLS [CLIENTS]
 *     A BASELINE IN THE PEER'S SHAPE, written here (no code copied): a
 *     breaker whose whole state lives in Redis as one JSON document, read
 *     (GET) and written back (SET) before and after every call, as gobreaker
 *     v2's DistributedCircuitBreaker does with its shared state around
 *     Execute. Makes CALLS successful calls (per client; CLIENTS processes
 *     at once, default 1) and prints
 *       `store calls=N round_trips=R ns_per_call=T requests_seen=Q`
 *     where requests_seen is the request count the document holds at the
 *     end: fewer than CLIENTS*CALLS means updates were lost to the
 *     read-modify-write.
 *   fleet_baseline ours FILE NAME CALLS
 *     cb_allow + cb_done on breaker NAME of the registry file FILE (the one
 *     a host's agent mirrors): `ours calls=N round_trips=0 ns_per_call=T`;
 *     the library opens no socket, so the request path makes no round trip.
 */
#define _POSIX_C_SOURCE 200809L
#include <hiredis/hiredis.h>
#include <lazybreaker/lazybreaker.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The shared state, as the store keeps it. */
typedef struct shared {
  char state[16]; /* closed, open, half_open */
  unsigned long long generation, requests, successes, failures, consecutive_successes,
      consecutive_failures, expiry_ms;
} shared;

static const char *KEY = "baseline:breaker:payments";
static unsigned long long round_trips;

static unsigned long long field(const char *json, const char *name) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", name);
  const char *p = strstr(json, pat);
  return p ? strtoull(p + strlen(pat), NULL, 10) : 0;
}

static void get_state(redisContext *c, shared *s) {
  redisReply *r = redisCommand(c, "GET %s", KEY);
  ++round_trips;
  memset(s, 0, sizeof *s);
  strcpy(s->state, "closed");
  if (!r) {
    fprintf(stderr, "fleet_baseline: GET: %s\n", c->errstr);
    exit(1);
  }
  if (r->type == REDIS_REPLY_STRING) {
    const char *st = strstr(r->str, "\"state\":\"");
    if (st) sscanf(st + 9, "%15[a-z_]", s->state);
    s->generation = field(r->str, "generation");
    s->requests = field(r->str, "requests");
    s->successes = field(r->str, "total_successes");
    s->failures = field(r->str, "total_failures");
    s->consecutive_successes = field(r->str, "consecutive_successes");
    s->consecutive_failures = field(r->str, "consecutive_failures");
    s->expiry_ms = field(r->str, "expiry_ms");
  }
  freeReplyObject(r);
}

static void set_state(redisContext *c, const shared *s) {
  char json[512];
  snprintf(json, sizeof json,
           "{\"state\":\"%s\",\"generation\":%llu,\"counts\":{\"requests\":%llu,"
           "\"total_successes\":%llu,\"total_failures\":%llu,\"consecutive_successes\":%llu,"
           "\"consecutive_failures\":%llu},\"expiry_ms\":%llu}",
           s->state, s->generation, s->requests, s->successes, s->failures,
           s->consecutive_successes, s->consecutive_failures, s->expiry_ms);
  redisReply *r = redisCommand(c, "SET %s %s", KEY, json);
  ++round_trips;
  if (!r) {
    fprintf(stderr, "fleet_baseline: SET: %s\n", c->errstr);
    exit(1);
  }
  freeReplyObject(r);
}

/* One call through the store-backed breaker: 5 failures in a row open it
 * for 30 s; after that one probe. Returns 1 when the call was admitted. */
static int store_call(redisContext *c, int fail) {
  shared s;
  get_state(c, &s); /* before the request: the shared state in */
  uint64_t now = wall_ms();
  if (strcmp(s.state, "open") == 0 && now >= s.expiry_ms) {
    strcpy(s.state, "half_open");
    ++s.generation;
  }
  int admitted = strcmp(s.state, "open") != 0;
  if (admitted) ++s.requests;
  set_state(c, &s); /* and out */
  if (!admitted) return 0;
  /* the call itself: nothing */
  get_state(c, &s); /* after the request: in again */
  if (fail) {
    ++s.failures;
    ++s.consecutive_failures;
    s.consecutive_successes = 0;
    if (strcmp(s.state, "half_open") == 0 || s.consecutive_failures >= 5) {
      strcpy(s.state, "open");
      s.expiry_ms = now + 30000;
      ++s.generation;
    }
  } else {
    ++s.successes;
    ++s.consecutive_successes;
    s.consecutive_failures = 0;
    if (strcmp(s.state, "half_open") == 0) {
      strcpy(s.state, "closed");
      ++s.generation;
    }
  }
  set_state(c, &s); /* and out */
  return 1;
}

static int run_store(int port, long calls, int clients) {
  redisContext *c = redisConnect("127.0.0.1", port);
  if (!c || c->err) {
    fprintf(stderr, "fleet_baseline: connect: %s\n", c ? c->errstr : "no memory");
    return 1;
  }
  redisReply *r = redisCommand(c, "DEL %s", KEY);
  freeReplyObject(r);
  uint64_t t0 = now_ns();
  for (int k = 0; k < clients; ++k) {
    if (fork() == 0) {
      redisContext *cc = redisConnect("127.0.0.1", port);
      if (!cc || cc->err) _exit(1);
      for (long i = 0; i < calls; ++i) store_call(cc, 0);
      /* round trips per call, reported through the exit status' room */
      redisFree(cc);
      _exit(round_trips == (unsigned long long)calls * 4u ? 0 : 3);
    }
  }
  int bad = 0;
  for (int k = 0; k < clients; ++k) {
    int ws = 0;
    wait(&ws);
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) bad = 1;
  }
  uint64_t t1 = now_ns();
  shared s;
  get_state(c, &s);
  redisFree(c);
  if (bad) {
    fprintf(stderr, "fleet_baseline: a client failed\n");
    return 1;
  }
  printf("store clients=%d calls=%ld round_trips=%.2f ns_per_call=%.0f requests_seen=%llu\n",
         clients, calls * clients, 4.0, (double)(t1 - t0) / (double)calls, s.requests);
  return 0;
}

static int run_ours(const char *path, const char *name, long calls) {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = path;
  cb_registry *reg = NULL;
  cb_handle h = 0;
  if (cb_registry_open(&o, &reg) != CB_OK || cb_lookup(reg, name, &h) != CB_OK) {
    fprintf(stderr, "fleet_baseline: %s: %s\n", path, cb_last_error_message());
    return 1;
  }
  uint64_t t0 = now_ns();
  for (long i = 0; i < calls; ++i) {
    cb_ticket t = 0;
    if (cb_allow(h, &t) == CB_OK) cb_done(h, t, CB_SUCCESS);
  }
  uint64_t t1 = now_ns();
  printf("ours calls=%ld round_trips=0 ns_per_call=%.1f\n", calls,
         (double)(t1 - t0) / (double)calls);
  cb_registry_close(reg);
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc >= 4 && strcmp(argv[1], "store") == 0)
    return run_store(atoi(argv[2]), atol(argv[3]), argc > 4 ? atoi(argv[4]) : 1);
  if (argc == 5 && strcmp(argv[1], "ours") == 0) return run_ours(argv[2], argv[3], atol(argv[4]));
  fprintf(stderr, "usage: fleet_baseline store PORT CALLS [CLIENTS] | ours FILE NAME CALLS\n");
  return 2;
}
