/* serve_pprof_sd.c - /debug/pprof/targets: the programs whose merged
 * profiles `ocgc serve` has (/debug/pprof/allocs?program=NAME), one
 * target each, as Prometheus's HTTP service discovery reads them
 * (http_sd_configs; Grafana Alloy's discovery.http, which feeds
 * pyroscope.scrape; Parca's scrape configurations, Prometheus's own):
 *
 *   [{"targets": ["HOST:PORT"],
 *     "labels": {"program": NAME, "service_name": NAME,
 *                "__param_program": NAME,
 *                "__meta_ocgc_profile_path": "/debug/pprof/allocs?program=NAME%..",
 *                "__meta_ocgc_cpu_profile_path": "/debug/pprof/profile?program=NAME%.."}}]
 *
 * __param_program is Prometheus's rule for a URL parameter: the scraper
 * adds ?program=NAME (encoding it itself), so a target stays the same
 * across the program's restarts; __meta_ocgc_profile_path is the same URL
 * written out, for relabelling and people, and __meta_ocgc_cpu_profile_path
 * the CPU profile's (the scraper's process_cpu path, the same parameter).  Named under /debug/pprof/ (not
 * /-/sd) because it lists what /debug/pprof serves and falls under the
 * same access rule.
 *
 * Invariants: a program name is the target's bytes: JSON-escaped
 * (json.c: always valid JSON in valid UTF-8, control characters, quotes
 * and U+2028/9 escaped), percent-encoded in the URL (every byte but
 * RFC 3986's unreserved), and at most OCGC_EXPO_LABEL_MAX bytes and its
 * cut mark (as /metrics labels it); the HOST:PORT is the request's Host
 * when it is a plain host and port (letters, digits, ".-:[]", at most 255
 * bytes), else "localhost"; at most PPROF_SD_MAX programs are listed (then
 * the rest left out); over a unix socket without --web.enable-pprof, only
 * the programs whose every process the peer may read (the rule of
 * serve_pprof_access.c). */

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "json.h"
#include "serve.h"

#define PPROF_SD_MAX 512 /* as --by program's programs */

struct sd_buf {
  char *p;
  size_t n, cap;
  int failed;
};

static void sd_put(void *ctx, const char *s, size_t n)
{
  struct sd_buf *b = ctx;
  if (b->failed) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 4096;
    char *q;
    while (cap < b->n + n + 1) cap *= 2;
    if ((q = realloc(b->p, cap)) == NULL) {
      b->failed = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
}

/* [s] percent-encoded into out (room: 3 x strlen + 1). */
static void pct(const char *s, char *out)
{
  static const char hex[] = "0123456789ABCDEF";
  for (; *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
        c == '-' || c == '.' || c == '_' || c == '~') {
      *out++ = (char)c;
    } else {
      *out++ = '%';
      *out++ = hex[c >> 4];
      *out++ = hex[c & 15];
    }
  }
  *out = '\0';
}

/* The Host header if it is a plain host[:port], else "localhost". */
static const char *host_of(struct MHD_Connection *c)
{
  const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
  size_t i;
  if (h == NULL || h[0] == '\0' || strlen(h) > 255) return "localhost";
  for (i = 0; h[i] != '\0'; i++)
    if (!((h[i] >= 'A' && h[i] <= 'Z') || (h[i] >= 'a' && h[i] <= 'z') ||
          (h[i] >= '0' && h[i] <= '9') || strchr(".-:[]", h[i]) != NULL))
      return "localhost";
  return h;
}

struct sd_prog {
  char name[OCGC_EXPO_LABEL_MAX + 4];
  int refused;
};

struct MHD_Response *serve_pprof_targets(struct serve_pprof *p, struct MHD_Connection *c,
                                         const struct serve_pprof_client *who, unsigned *status)
{
  struct sd_prog *progs;
  struct serve_pprof_member *m = NULL;
  struct serve_pprof_creds *gone = NULL;
  char (*gone_prog)[OCGC_EXPO_LABEL_MAX + 4] = NULL;
  size_t nm = 0, ng = 0, np = 0, i, k;
  uint64_t now = cm_mono_ns();
  const struct pprof_kept *kp;
  struct sd_buf b = {NULL, 0, 0, 0};
  struct json j;
  struct MHD_Response *r;
  const char *host = host_of(c);
  if ((progs = calloc(PPROF_SD_MAX, sizeof *progs)) == NULL) return NULL;
  /* a copy of the lists, so that /proc is read with no lock held */
  pthread_mutex_lock(&p->lock);
  if (p->nmembers > 0 && (m = malloc(p->nmembers * sizeof *m)) != NULL) {
    memcpy(m, p->members, p->nmembers * sizeof *m);
    nm = p->nmembers;
  }
  if (p->nkept > 0 && (gone = malloc(p->nkept * sizeof *gone)) != NULL &&
      (gone_prog = malloc(p->nkept * sizeof *gone_prog)) != NULL) {
    for (kp = p->kept; kp != NULL && ng < p->nkept; kp = kp->next)
      if (kp->gone_ns != 0 && now - kp->gone_ns <= PPROF_KEEP_NS) {
        gone[ng] = kp->creds;
        memcpy(gone_prog[ng++], kp->program, sizeof gone_prog[0]);
      }
  }
  pthread_mutex_unlock(&p->lock);
  for (i = 0; i < nm + ng; i++) {
    const char *name = i < nm ? m[i].program : gone_prog[i - nm];
    int may = i < nm ? serve_pprof_may_read(who, m[i].pid)
                     : serve_pprof_may_read_creds(who, &gone[i - nm]);
    for (k = 0; k < np && strcmp(progs[k].name, name) != 0; k++) {}
    if (k == np) {
      if (np == PPROF_SD_MAX || name[0] == '\0') continue;
      memcpy(progs[np++].name, name, sizeof progs[0].name);
    }
    progs[k].refused |= !may;
  }
  json_init(&j, sd_put, &b, 0);
  json_arr(&j, JSON_LINES);
  for (k = 0; k < np; k++) {
    char path[64 + 3 * sizeof progs[0].name];
    if (progs[k].refused) continue;
    strcpy(path, "/debug/pprof/allocs?program=");
    pct(progs[k].name, path + strlen(path));
    json_obj(&j, JSON_INLINE);
    json_key(&j, "targets");
    json_arr(&j, JSON_INLINE);
    json_str(&j, host);
    json_arr_end(&j);
    json_key(&j, "labels");
    json_obj(&j, JSON_INLINE);
    json_key(&j, "program");
    json_str(&j, progs[k].name);
    json_key(&j, "service_name");
    json_str(&j, progs[k].name);
    json_key(&j, "__param_program");
    json_str(&j, progs[k].name);
    json_key(&j, "__meta_ocgc_profile_path");
    json_str(&j, path);
    strcpy(path, "/debug/pprof/profile?program=");
    pct(progs[k].name, path + strlen(path));
    json_key(&j, "__meta_ocgc_cpu_profile_path");
    json_str(&j, path);
    json_obj_end(&j);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  sd_put(&b, "\n", 1);
  free(progs);
  free(m);
  free(gone);
  free(gone_prog);
  if (b.failed) {
    free(b.p);
    return NULL;
  }
  r = MHD_create_response_from_buffer_with_free_callback(b.n, b.p, free);
  if (r == NULL) {
    free(b.p);
    return NULL;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  *status = MHD_HTTP_OK;
  return r;
}
