/* Reads the quiet-path vectors back (LB_QUIET_VECTORS, docs/fastpath.md) as
 * a port does: every line must parse, every decision must be the header's
 * (include/lazybreaker/fastpath.h), and the library must publish the layout
 * and numbers the file was written for. Fails on the first mismatch, naming
 * its line. */
#include <errno.h>
#include <inttypes.h>
#include <lazybreaker/fastpath.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lb_fail(const char *path, unsigned line, const char *why, const char *text) {
  fprintf(stderr, "%s:%u: %s: %s\n", path, line, why, text);
  return 1;
}

/* Hex words, as the file writes them: lowercase, no 0x, 64 bits at most. */
static int lb_hex(const char *s, uint64_t *out) {
  uint64_t v = 0;
  if (*s == '\0' || strlen(s) > 16) return 0;
  for (; *s; s++) {
    const char c = *s;
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return 0;
    v = v << 4 | (uint64_t)digit;
  }
  *out = v;
  return 1;
}

/* Splits `line` on single spaces into at most `max` fields (two spaces
 * make an empty field, which no number parses as). */
static size_t lb_fields(char *line, char **fields, size_t max) {
  size_t n = 0;
  for (char *f = line;; f++) {
    if (n == max) return max + 1;
    fields[n++] = f;
    f = strchr(f, ' ');
    if (!f) return n;
    *f = '\0';
  }
}

static int lb_hex_fields(char **fields, const size_t *which, size_t count, uint64_t *out) {
  for (size_t i = 0; i < count; i++)
    if (!lb_hex(fields[which[i]], &out[i])) return 0;
  return 1;
}

/* 1 if the vector holds; *why says what did not. */
static int lb_check_allow(char **f, size_t n, const char **why) {
  static const size_t numbers[] = {1, 2, 3, 4, 5, 7};
  static const char *const names[] = {"library", "admit", "reject"};
  uint64_t v[6];
  if (n != 8 || !lb_hex_fields(f, numbers, 6, v) || v[3] > 1) return *why = "malformed allow", 0;
  cb_ticket ticket = 0;
  const int decision = cb_fastpath_decide_allow(v[0], v[1], v[2], (unsigned)v[3], v[4], &ticket);
  if (strcmp(f[6], names[decision]) != 0) return *why = "allow decision differs", 0;
  if (ticket != v[5]) return *why = "allow ticket differs", 0;
  return 1;
}

static int lb_check_done(char **f, size_t n, const char **why) {
  static const size_t numbers[] = {1, 2, 3, 4};
  uint64_t v[4];
  if (n != 6 || !lb_hex_fields(f, numbers, 4, v) || v[3] > 0xff) return *why = "malformed done", 0;
  const int decision = cb_fastpath_decide_done(v[0], v[1], v[2], (int)v[3]);
  if (strcmp(f[5], decision == CB_FASTPATH_SUCCESS ? "success" : "library") != 0)
    return *why = "done decision differs", 0;
  return 1;
}

static int lb_check_count(char **f, size_t n, const char **why) {
  static const size_t numbers[] = {1, 2, 3, 4, 5};
  uint64_t v[5];
  if (n != 6 || !lb_hex_fields(f, numbers, 5, v) || v[1] > CB_FASTPATH_SUCCESSES || v[4] > 1)
    return *why = "malformed count", 0;
  if (v[2] != CB_FASTPATH_FOLD_AT) return *why = "fold_at is not the library's", 0;
  int fold = 0;
  const uint64_t cell = cb_fastpath_count_cell(v[0], (int)v[1], (uint32_t)v[2], &fold);
  if (cell != v[3]) return *why = "count new cell differs", 0;
  if ((uint64_t)fold != v[4]) return *why = "count fold differs", 0;
  return 1;
}

/* The numbers the header fixes for layout 1 are the ones the library reports. */
static int lb_library_publishes_layout_1(void) {
  cb_fastpath fp;
  memset(&fp, 0, sizeof fp);
  fp.struct_size = sizeof fp;
  if (cb_fastpath_describe(&fp) != CB_OK) return 0;
  return fp.layout == CB_FASTPATH_LAYOUT && fp.index_bits == CB_FASTPATH_INDEX_BITS &&
         fp.line_words == CB_FASTPATH_LINE_WORDS &&
         fp.open_period_word == CB_FASTPATH_OPEN_PERIOD_WORD &&
         fp.chunk_bits == CB_FASTPATH_CHUNK_BITS && fp.fold_at == CB_FASTPATH_FOLD_AT;
}

int main(void) {
  const char *path = getenv("LB_QUIET_VECTORS");
  if (!path || !*path) {
    fprintf(stderr, "test_quiet_vectors: LB_QUIET_VECTORS is not set\n");
    return 1;
  }
  if (!lb_library_publishes_layout_1()) {
    fprintf(stderr, "test_quiet_vectors: the library does not publish the header's layout 1\n");
    return 1;
  }
  FILE *in = fopen(path, "r");
  if (!in) {
    fprintf(stderr, "test_quiet_vectors: cannot read %s: %s\n", path, strerror(errno));
    return 1;
  }
  char line[512], text[512];
  unsigned number = 0, allow = 0, done = 0, count = 0;
  while (fgets(line, sizeof line, in)) {
    number++;
    const size_t len = strcspn(line, "\n");
    if (line[len] != '\n' && !feof(in)) return lb_fail(path, number, "line too long", line);
    line[len] = '\0';
    if (line[0] == '#' || line[0] == '\0') continue;
    memcpy(text, line, len + 1);
    char *fields[9];
    const size_t n = lb_fields(line, fields, 8);
    const char *why = "unknown kind";
    int ok = 0;
    if (n >= 1 && strcmp(fields[0], "allow") == 0) {
      ok = lb_check_allow(fields, n, &why);
      allow++;
    } else if (n >= 1 && strcmp(fields[0], "done") == 0) {
      ok = lb_check_done(fields, n, &why);
      done++;
    } else if (n >= 1 && strcmp(fields[0], "count") == 0) {
      ok = lb_check_count(fields, n, &why);
      count++;
    }
    if (!ok) return fclose(in), lb_fail(path, number, why, text);
  }
  fclose(in);
  printf("test_quiet_vectors: %u allow, %u done, %u count vectors agree with fastpath.h\n", allow,
         done, count);
  if (allow == 0 || done == 0 || count == 0) {
    fprintf(stderr, "test_quiet_vectors: %s lacks a kind of vector\n", path);
    return 1;
  }
  return 0;
}
