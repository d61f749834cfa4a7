/* webconfig.c - `ocgc serve --web.config.file FILE` (webconfig.h): the
 * exporter web configuration of Prometheus's exporters, read with libyaml,
 * its TLS settings as a GnuTLS priority string, and the check of a
 * basic-auth password against its bcrypt hash with libcrypt (which
 * serve_auth.c runs on its worker, never on the HTTP thread).
 *
 * Invariants: the file and the files it names are read whole, each at most
 * WEB_FILE_MAX bytes; the file's events are checked before its document is
 * built (at most WEB_DEPTH_MAX levels, so libyaml's time stays linear; no
 * key twice in a mapping, as Go's strict YAML; one document; an alias is
 * no key); every key is known or an error (a misspelt basic_auth_users
 * must not leave the exporter open); tls_server_config given is TLS or an
 * error, never plain HTTP; what the file does not say keeps
 * exporter-toolkit's default (TLS 1.2 at least, Go's default suites:
 * ECDHE with an AEAD cipher, no client certificate); a setting the
 * toolkit has and ocgc cannot honour (curve_preferences,
 * client_allowed_sans, rate_limit) is an error saying so, never silently
 * ignored; a bcrypt cost is at most WEB_BCRYPT_COST_MAX; a password is
 * compared by the hash it gives, in constant time. */

#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <yaml.h>

#include "clock.h"
#include "common.h"
#include "webconfig.h"

#define WEB_FILE_MAX (1u << 20) /* a config, a certificate chain, a CA bundle */
#define WEB_BCRYPT_COST_MAX 16  /* about 4 s a check here; libcrypt takes up to 31 */

/* The loader's state: the file's name and folder, for messages and for the
 * files it names. */
struct loader {
  const char *path;
  char dir[4096];
  yaml_document_t *doc;
  struct web_config *c;
  const char *cert_file, *key_file, *ca_file; /* as the file says */
  int cert_inline, key_inline, ca_inline;
  const yaml_node_t *suites_at;  /* cipher_suites, for a message */
};

static int bad(const struct loader *l, const yaml_node_t *n, const char *fmt, const char *arg)
{
  char what[512];
  snprintf(what, sizeof what, fmt, arg);
  tool_say("%s:%lu: %s", l->path, n ? (unsigned long)n->start_mark.line + 1 : 1ul, what);
  return -1;
}

/* Read [path] whole (at most WEB_FILE_MAX bytes), NUL-terminated: the
 * bytes (*n of them), or NULL after a line. */
static char *slurp(const char *path, size_t *n)
{
  char *buf;
  size_t got = 0;
  ssize_t r;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    tool_say("cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  if ((buf = malloc(WEB_FILE_MAX + 1)) == NULL) {
    close(fd);
    tool_say("%s: out of memory", path);
    return NULL;
  }
  while (got <= WEB_FILE_MAX && (r = read(fd, buf + got, WEB_FILE_MAX + 1 - got)) > 0)
    got += (size_t)r;
  close(fd);
  if (got > WEB_FILE_MAX) {
    tool_say("%s: longer than %u bytes", path, WEB_FILE_MAX);
    free(buf);
    return NULL;
  }
  buf[got] = '\0';
  *n = got;
  return buf;
}

static const char *scalar(const yaml_node_t *n)
{
  return n != NULL && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A scalar value, or an error naming [key]. */
static int want_scalar(const struct loader *l, const yaml_node_t *v, const char *key,
                       const char **out)
{
  if ((*out = scalar(v)) == NULL) return bad(l, v, "%s wants a single value", key);
  return 0;
}

static int want_bool(const struct loader *l, const yaml_node_t *v, const char *key, int *out)
{
  const char *s;
  if (want_scalar(l, v, key, &s) != 0) return -1;
  if (strcmp(s, "true") == 0) *out = 1;
  else if (strcmp(s, "false") == 0) *out = 0;
  else return bad(l, v, "%s wants true or false", key);
  return 0;
}

/* A copy of [s], or NULL after a line. */
static char *dup_or_say(const struct loader *l, const yaml_node_t *n, const char *s)
{
  char *d = strdup(s);
  if (d == NULL) bad(l, n, "out of memory%s", "");
  return d;
}

/* The file [name] says, relative to the config's folder unless absolute:
 * its text into *out. */
static int read_named(const struct loader *l, const char *name, char **out)
{
  char full[8192];
  size_t n;
  if (name[0] == '/' || l->dir[0] == '\0') snprintf(full, sizeof full, "%s", name);
  else if (snprintf(full, sizeof full, "%s/%s", l->dir, name) >= (int)sizeof full) {
    tool_say("%s: the path %s is too long", l->path, name);
    return -1;
  }
  if ((*out = slurp(full, &n)) == NULL) return -1;
  if (n == 0) {
    tool_say("%s: %s is empty", l->path, full);
    free(*out);
    *out = NULL;
    return -1;
  }
  return 0;
}

static int tls_version(const struct loader *l, const yaml_node_t *v, const char *key,
                       unsigned *out)
{
  static const struct { const char *name; unsigned v; } names[] = {
    {"TLS10", 0x0301}, {"TLS11", 0x0302}, {"TLS12", 0x0303}, {"TLS13", 0x0304}};
  const char *s;
  unsigned i;
  if (want_scalar(l, v, key, &s) != 0) return -1;
  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(s, names[i].name) == 0) {
      *out = names[i].v;
      return 0;
    }
  return bad(l, v, "unknown TLS version '%s' (TLS10, TLS11, TLS12 or TLS13)", s);
}

static int client_auth(const struct loader *l, const yaml_node_t *v, enum web_client_auth *out)
{
  static const char *const names[] = {"NoClientCert", "RequestClientCert", "RequireAnyClientCert",
                                      "VerifyClientCertIfGiven", "RequireAndVerifyClientCert"};
  const char *s;
  unsigned i;
  if (want_scalar(l, v, "client_auth_type", &s) != 0) return -1;
  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(s, names[i]) == 0) {
      *out = (enum web_client_auth)i;
      /* A certificate that nobody checks proves nothing (the toolkit's
       * own documentation calls these insecure); libmicrohttpd asks for
       * one only with a CA to check it against. */
      if (*out == WEB_REQUEST_CLIENT_CERT || *out == WEB_REQUIRE_ANY_CLIENT_CERT)
        return bad(l, v, "client_auth_type %s is not supported by ocgc serve (a certificate "
                   "nobody checks): use RequireAndVerifyClientCert with client_ca_file", s);
      return 0;
    }
  return bad(l, v, "unknown client_auth_type '%s' (NoClientCert, RequestClientCert, "
             "RequireAnyClientCert, VerifyClientCertIfGiven or RequireAndVerifyClientCert)", s);
}

/* Go's names of the TLS 1.2 suites (crypto/tls: CipherSuites() and
 * InsecureCipherSuites()) as GnuTLS's key exchange, cipher and MAC. */
static const struct suite {
  const char *go, *kx, *cipher, *mac;
} suite_names[] = {
  {"TLS_RSA_WITH_3DES_EDE_CBC_SHA", "RSA", "3DES-CBC", "SHA1"},
  {"TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1"},
  {"TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1"},
  {"TLS_RSA_WITH_AES_128_CBC_SHA256", "RSA", "AES-128-CBC", "SHA256"},
  {"TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM", "AEAD"},
  {"TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM", "AEAD"},
  {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA", "AES-128-CBC", "SHA1"},
  {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA", "AES-256-CBC", "SHA1"},
  {"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "ECDHE-RSA", "3DES-CBC", "SHA1"},
  {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC", "SHA1"},
  {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC", "SHA1"},
  {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA", "AES-128-CBC", "SHA256"},
  {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA", "AES-128-CBC", "SHA256"},
  {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM", "AEAD"},
  {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM", "AEAD"},
  {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM", "AEAD"},
  {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM", "AEAD"},
  {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
  {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
  {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
  {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
};
#define NSUITES (sizeof suite_names / sizeof suite_names[0])

/* cipher_suites: a list of Go's names.  TLS 1.3's are taken and change
 * nothing, as in Go (its suites are not chosen); RC4 is refused (GnuTLS
 * has none). */
static int cipher_suites(struct loader *l, const yaml_node_t *v)
{
  struct web_config *c = l->c;
  yaml_node_item_t *it;
  l->suites_at = v;
  c->nsuites = 0;
  if (v->type == YAML_SCALAR_NODE && scalar(v)[0] == '\0') return 0; /* Go's defaults */
  if (v->type != YAML_SEQUENCE_NODE) return bad(l, v, "cipher_suites wants a list of names%s", "");
  for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
    const yaml_node_t *e = yaml_document_get_node(l->doc, *it);
    const char *s = scalar(e);
    unsigned i;
    if (s == NULL) return bad(l, e, "cipher_suites wants names such as "
                              "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256%s", "");
    if (strcmp(s, "TLS_AES_128_GCM_SHA256") == 0 || strcmp(s, "TLS_AES_256_GCM_SHA384") == 0 ||
        strcmp(s, "TLS_CHACHA20_POLY1305_SHA256") == 0)
      continue;
    if (strstr(s, "_RC4_") != NULL)
      return bad(l, e, "cipher suite %s: RC4 is not offered by ocgc serve (GnuTLS has none)", s);
    for (i = 0; i < NSUITES && strcmp(s, suite_names[i].go) != 0; i++) {}
    if (i == NSUITES)
      return bad(l, e, "unknown cipher suite '%s' (Go's names, such as "
                 "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)", s);
    if (c->nsuites == WEB_SUITES_MAX) return bad(l, e, "more than %s cipher suites", "32");
    c->suites[c->nsuites++] = (unsigned char)i;
  }
  return 0;
}

/* One key of tls_server_config. */
static int tls_key(struct loader *l, const char *k, const yaml_node_t *v)
{
  struct web_config *c = l->c;
  const char *s;
  if (strcmp(k, "cert_file") == 0) return want_scalar(l, v, k, &l->cert_file);
  if (strcmp(k, "key_file") == 0) return want_scalar(l, v, k, &l->key_file);
  if (strcmp(k, "client_ca_file") == 0) return want_scalar(l, v, k, &l->ca_file);
  if (strcmp(k, "cert") == 0 || strcmp(k, "key") == 0 || strcmp(k, "client_ca") == 0) {
    char **dst = k[0] == 'k' ? &c->key_pem : strcmp(k, "cert") == 0 ? &c->cert_pem
                                                                     : &c->client_ca_pem;
    if (want_scalar(l, v, k, &s) != 0) return -1;
    free(*dst);
    if ((*dst = dup_or_say(l, v, s)) == NULL) return -1;
    if (k[0] == 'k') l->key_inline = 1;
    else if (strcmp(k, "cert") == 0) l->cert_inline = 1;
    else l->ca_inline = 1;
    return 0;
  }
  if (strcmp(k, "client_auth_type") == 0) return client_auth(l, v, &c->client_auth);
  if (strcmp(k, "min_version") == 0) return tls_version(l, v, k, &c->min_version);
  if (strcmp(k, "max_version") == 0) return tls_version(l, v, k, &c->max_version);
  if (strcmp(k, "prefer_server_cipher_suites") == 0) return want_bool(l, v, k, &c->server_order);
  if (strcmp(k, "cipher_suites") == 0) return cipher_suites(l, v);
  if (strcmp(k, "curve_preferences") == 0 || strcmp(k, "client_allowed_sans") == 0)
    return bad(l, v, "tls_server_config.%s is not supported by ocgc serve (GnuTLS's defaults "
               "for the TLS versions allowed are used): remove it", k);
  return bad(l, v, "unknown key tls_server_config.%s", k);
}

/* http_server_config: http2 (ocgc speaks HTTP/1.1, which a client that
 * asks for HTTP/2 falls back to) and headers. */
static int http_key(struct loader *l, const char *k, const yaml_node_t *v)
{
  static const char *const known[] = {"Content-Security-Policy", "X-Frame-Options",
                                      "X-Content-Type-Options", "X-XSS-Protection",
                                      "Strict-Transport-Security"};
  struct web_config *c = l->c;
  yaml_node_pair_t *p;
  int b;
  if (strcmp(k, "http2") == 0) return want_bool(l, v, k, &b);
  if (strcmp(k, "headers") != 0) return bad(l, v, "unknown key http_server_config.%s", k);
  if (v->type != YAML_MAPPING_NODE) return bad(l, v, "headers wants a mapping%s", "");
  for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
    const yaml_node_t *hk = yaml_document_get_node(l->doc, p->key);
    const yaml_node_t *hv = yaml_document_get_node(l->doc, p->value);
    const char *name = scalar(hk), *value;
    unsigned i;
    struct web_header *h;
    if (name == NULL) return bad(l, hk, "a header's name wants a single value%s", "");
    for (i = 0; i < sizeof known / sizeof known[0] && strcmp(name, known[i]) != 0; i++) {}
    if (i == sizeof known / sizeof known[0])
      return bad(l, hk, "header '%s' may not be set (Content-Security-Policy, X-Frame-Options, "
                 "X-Content-Type-Options, X-XSS-Protection, Strict-Transport-Security)", name);
    if (want_scalar(l, hv, name, &value) != 0) return -1;
    if (strpbrk(value, "\r\n") != NULL) return bad(l, hv, "header %s holds a line end", name);
    if (value[0] == '\0') continue; /* unset if blank */
    if ((h = realloc(c->headers, (c->nheaders + 1) * sizeof *h)) == NULL)
      return bad(l, hv, "out of memory%s", "");
    c->headers = h;
    h += c->nheaders;
    h->name = h->value = NULL;
    c->nheaders++;
    if ((h->name = dup_or_say(l, hk, name)) == NULL || (h->value = dup_or_say(l, hv, value)) == NULL)
      return -1;
  }
  return 0;
}

/* A bcrypt hash libcrypt takes; *ns what one check of it took. */
static int hash_ok(const char *h, uint64_t *ns)
{
  uint64_t t0;
  struct crypt_data *cd;
  const char *out;
  int ok;
  if (strncmp(h, "$2a$", 4) != 0 && strncmp(h, "$2b$", 4) != 0 && strncmp(h, "$2y$", 4) != 0)
    return 0;
  /* The cost first: checking a hash runs it, and each step doubles the
   * time (cost 10 is about 60 ms here): past WEB_BCRYPT_COST_MAX the start,
   * and then every request with a wrong password, would wait minutes to
   * hours on the one HTTP thread. */
  if (h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9' || h[6] != '$' ||
      (h[4] - '0') * 10 + (h[5] - '0') > WEB_BCRYPT_COST_MAX)
    return 0;
  if ((cd = calloc(1, sizeof *cd)) == NULL) return 0;
  /* A hash of nothing with it as the setting: libcrypt parses it (cost,
   * salt); a cost past 31 or a bad salt gives "*0"/"*1" or NULL. */
  t0 = cm_mono_ns();
  out = crypt_r("", h, cd);
  *ns = cm_mono_ns() - t0;
  ok = out != NULL && out[0] == '$' && strlen(out) == strlen(h);
  free(cd);
  return ok;
}

static int users(struct loader *l, const yaml_node_t *v)
{
  struct web_config *c = l->c;
  yaml_node_pair_t *p;
  if (v->type == YAML_SCALAR_NODE && scalar(v)[0] == '\0') return 0; /* "basic_auth_users:" */
  if (v->type != YAML_MAPPING_NODE) return bad(l, v, "basic_auth_users wants a mapping%s", "");
  for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
    const yaml_node_t *uk = yaml_document_get_node(l->doc, p->key);
    const yaml_node_t *uv = yaml_document_get_node(l->doc, p->value);
    const char *name = scalar(uk), *hash;
    struct web_user *u;
    uint64_t ns = 0;
    /* A name given twice: refused with the other keys given twice
     * (check_events). */
    if (name == NULL || name[0] == '\0' || strchr(name, ':') != NULL)
      return bad(l, uk, "a user's name wants a single value, not empty, without ':'%s", "");
    if (want_scalar(l, uv, name, &hash) != 0) return -1;
    if (!hash_ok(hash, &ns))
      return bad(l, uv, "the password of '%s' is not a bcrypt hash of cost 4 to 16 ($2y$..., "
                 "made by `htpasswd -nBC 10 \"\" | tr -d ':\\n'`)", name);
    if ((u = realloc(c->users, (c->nusers + 1) * sizeof *u)) == NULL)
      return bad(l, uv, "out of memory%s", "");
    c->users = u;
    u += c->nusers;
    u->name = u->hash = NULL;
    u->check_ns = ns;
    u->cost = (unsigned)(hash[4] - '0') * 10 + (unsigned)(hash[5] - '0'); /* hash_ok read it */
    if (ns > c->slowest_ns) c->slowest_ns = ns;
    if (u->cost > c->max_cost) c->max_cost = u->cost;
    c->nusers++;
    if ((u->name = dup_or_say(l, uk, name)) == NULL || (u->hash = dup_or_say(l, uv, hash)) == NULL)
      return -1;
  }
  return 0;
}

/* A mapping section: each key to [fn]. */
static int section(struct loader *l, const yaml_node_t *v, const char *name,
                   int (*fn)(struct loader *, const char *, const yaml_node_t *))
{
  yaml_node_pair_t *p;
  if (v->type == YAML_SCALAR_NODE && scalar(v)[0] == '\0') return 0; /* empty */
  if (v->type != YAML_MAPPING_NODE) return bad(l, v, "%s wants a mapping", name);
  for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
    const yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
    const char *ks = scalar(k);
    if (ks == NULL) return bad(l, k, "a key of %s wants a single value", name);
    if (fn(l, ks, yaml_document_get_node(l->doc, p->value)) != 0) return -1;
  }
  return 0;
}

/* After the sections: the files named read, and the whole checked. */
static int finish(struct loader *l)
{
  struct web_config *c = l->c;
  if (!c->tls) {
    if (c->client_auth != WEB_NO_CLIENT_CERT)
      return bad(l, NULL, "client_auth_type wants a tls_server_config%s", "");
    return 0;
  }
  if ((l->cert_file != NULL) == l->cert_inline || (l->key_file != NULL) == l->key_inline)
    return bad(l, NULL, "tls_server_config wants a certificate and a key: cert_file and "
               "key_file (or cert and key inline, not both)%s", "");
  if (l->ca_file != NULL && l->ca_inline)
    return bad(l, NULL, "tls_server_config: client_ca_file or client_ca, not both%s", "");
  if (l->cert_file != NULL && read_named(l, l->cert_file, &c->cert_pem) != 0) return -1;
  if (l->key_file != NULL && read_named(l, l->key_file, &c->key_pem) != 0) return -1;
  if (l->ca_file != NULL && read_named(l, l->ca_file, &c->client_ca_pem) != 0) return -1;
  if (c->client_ca_pem != NULL && c->client_auth == WEB_NO_CLIENT_CERT)
    return bad(l, NULL, "a client CA is given without a client_auth_type that uses it "
               "(RequireAndVerifyClientCert)%s", "");
  if (c->client_ca_pem == NULL && (c->client_auth == WEB_VERIFY_CLIENT_CERT_IF_GIVEN ||
                                   c->client_auth == WEB_REQUIRE_AND_VERIFY_CLIENT_CERT))
    return bad(l, NULL, "client_auth_type %s wants client_ca_file",
               c->client_auth == WEB_VERIFY_CLIENT_CERT_IF_GIVEN ? "VerifyClientCertIfGiven"
                                                                 : "RequireAndVerifyClientCert");
  if (c->min_version > c->max_version)
    return bad(l, NULL, "min_version is above max_version%s", "");
  if (c->max_version < 0x0303 && c->nsuites == 0)
    return bad(l, NULL, "TLS 1.0 and 1.1 have none of the default suites (AEAD ciphers): give "
               "cipher_suites with a CBC suite%s", "");
  {
    /* The suites as GnuTLS takes them, said now rather than when the
     * server starts. */
    char prio[WEB_PRIORITIES_MAX];
    gnutls_priority_t pc;
    const char *where = NULL;
    web_config_priorities(c, prio, sizeof prio);
    if (gnutls_priority_init(&pc, prio, &where) != 0)
      return bad(l, l->suites_at, "GnuTLS takes none of these suites (at '%s')",
                 where != NULL ? where : "?");
    gnutls_priority_deinit(pc);
  }
  return 0;
}

static int top_level(struct loader *l, const yaml_node_t *root)
{
  yaml_node_pair_t *p;
  if (root == NULL) return 0; /* an empty file: plain HTTP, no authentication */
  if (root->type == YAML_SCALAR_NODE && scalar(root)[0] == '\0') return 0;
  if (root->type != YAML_MAPPING_NODE) return bad(l, root, "the file wants a mapping%s", "");
  for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
    const yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
    const yaml_node_t *v = yaml_document_get_node(l->doc, p->value);
    const char *ks = scalar(k);
    int err;
    if (ks == NULL) return bad(l, k, "a key wants a single value%s", "");
    if (strcmp(ks, "tls_server_config") == 0) {
      /* Given, it means TLS: empty or null, it would have served plain
       * HTTP to whoever thought the file turned TLS on. */
      const char *sv = scalar(v);
      if ((sv != NULL && (sv[0] == '\0' || strcmp(sv, "~") == 0 || strcasecmp(sv, "null") == 0)) ||
          (v->type == YAML_MAPPING_NODE && v->data.mapping.pairs.start == v->data.mapping.pairs.top))
        return bad(l, v, "tls_server_config is empty: give cert_file and key_file, or remove "
                   "it to serve plain HTTP%s", "");
      l->c->tls = 1;
      err = section(l, v, ks, tls_key);
    } else if (strcmp(ks, "http_server_config") == 0) {
      err = section(l, v, ks, http_key);
    } else if (strcmp(ks, "basic_auth_users") == 0) {
      err = users(l, v);
    } else if (strcmp(ks, "rate_limit") == 0) {
      err = bad(l, k, "rate_limit is not supported by ocgc serve (its connection bounds hold): "
                "remove it%s", "");
    } else {
      err = bad(l, k, "unknown key %s (tls_server_config, http_server_config, basic_auth_users)",
                ks);
    }
    if (err != 0) return -1;
  }
  return finish(l);
}

/* One key seen in a mapping: check_events' record. */
struct key_seen {
  unsigned long map, line;
  char *key;
};

static int by_map_key_line(const void *a, const void *b)
{
  const struct key_seen *x = a, *y = b;
  int k;
  if (x->map != y->map) return x->map < y->map ? -1 : 1;
  if ((k = strcmp(x->key, y->key)) != 0) return k;
  return x->line < y->line ? -1 : x->line > y->line;
}

/* The file's events, before its document is built: at most WEB_DEPTH_MAX
 * levels (libyaml's scanner is quadratic in the depth: refused at the
 * first level past it, so the time stays linear in the file), one
 * document, no alias nor collection as a key, and no key twice in one
 * mapping (Go's strict YAML refuses them; libyaml keeps both, and the
 * later one would silently win or be ignored).  0, or -1 after a line. */
static int check_events(const char *path, const char *text, size_t n)
{
  struct frame {
    int mapping, want_key;
    unsigned long id;
  } stack[WEB_DEPTH_MAX];
  struct key_seen *keys = NULL;
  size_t nkeys = 0, cap = 0, i;
  unsigned depth = 0, docs = 0;
  unsigned long maps = 0, dup_line = 0, first_line = 0;
  const char *dup = NULL;
  yaml_parser_t parser;
  yaml_event_t ev;
  int rc = -1, done = 0;
  if (!yaml_parser_initialize(&parser)) {
    tool_say("%s: out of memory", path);
    return -1;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, n);
  while (!done) {
    unsigned long line;
    struct frame *top;
    int node, is_key = 0;
    if (!yaml_parser_parse(&parser, &ev)) {
      tool_say("%s:%lu: not YAML: %s", path, (unsigned long)parser.problem_mark.line + 1,
               parser.problem ? parser.problem : "?");
      goto out;
    }
    line = (unsigned long)ev.start_mark.line + 1;
    top = depth > 0 ? &stack[depth - 1] : NULL;
    node = ev.type == YAML_SCALAR_EVENT || ev.type == YAML_ALIAS_EVENT ||
           ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT;
    if (node && top != NULL && top->mapping) {
      is_key = top->want_key;
      top->want_key = !top->want_key;
    }
    if (is_key && ev.type != YAML_SCALAR_EVENT) {
      tool_say("%s:%lu: a key wants a single value%s", path, line,
               ev.type == YAML_ALIAS_EVENT ? " (not an alias)" : "");
      goto fail_event;
    }
    switch (ev.type) {
    case YAML_DOCUMENT_START_EVENT:
      if (++docs > 1) {
        tool_say("%s:%lu: a second document: the file is one", path, line);
        goto fail_event;
      }
      break;
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT:
      if (depth == WEB_DEPTH_MAX) {
        tool_say("%s:%lu: nested deeper than %d levels", path, line, WEB_DEPTH_MAX);
        goto fail_event;
      }
      stack[depth].mapping = ev.type == YAML_MAPPING_START_EVENT;
      stack[depth].want_key = 1;
      stack[depth].id = maps++;
      depth++;
      break;
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT:
      if (depth > 0) depth--;
      break;
    case YAML_SCALAR_EVENT:
      if (is_key) {
        if (nkeys == cap) {
          size_t ncap = cap ? cap * 2 : 64;
          struct key_seen *k = realloc(keys, ncap * sizeof *k);
          if (k == NULL) { tool_say("%s: out of memory", path); goto fail_event; }
          keys = k;
          cap = ncap;
        }
        if ((keys[nkeys].key = strdup((const char *)ev.data.scalar.value)) == NULL) {
          tool_say("%s: out of memory", path);
          goto fail_event;
        }
        keys[nkeys].map = top->id;
        keys[nkeys].line = line;
        nkeys++;
      }
      break;
    case YAML_STREAM_END_EVENT:
      done = 1;
      break;
    default:
      break;
    }
    yaml_event_delete(&ev);
  }
  /* Sorted, a key given twice in one mapping is two neighbours: the first
   * such place in the file is said. */
  if (nkeys > 1) qsort(keys, nkeys, sizeof *keys, by_map_key_line);
  for (i = 1; i < nkeys; i++)
    if (keys[i].map == keys[i - 1].map && strcmp(keys[i].key, keys[i - 1].key) == 0 &&
        (dup == NULL || keys[i].line < dup_line)) {
      dup = keys[i].key;
      dup_line = keys[i].line;
      first_line = keys[i - 1].line;
    }
  if (dup != NULL) {
    tool_say("%s:%lu: key '%s' given twice in one mapping (first at line %lu)", path, dup_line,
             dup, first_line);
    goto out;
  }
  rc = 0;
  goto out;
fail_event:
  yaml_event_delete(&ev);
out:
  for (i = 0; i < nkeys; i++) free(keys[i].key);
  free(keys);
  yaml_parser_delete(&parser);
  return rc;
}

int web_config_load(const char *path, struct web_config *c)
{
  struct loader l;
  yaml_parser_t parser;
  yaml_document_t doc;
  char *text, *slash;
  size_t n;
  int rc;
  memset(c, 0, sizeof *c);
  c->min_version = 0x0303;
  c->max_version = 0x0304;
  c->server_order = 1;
  memset(&l, 0, sizeof l);
  l.path = path;
  l.c = c;
  snprintf(l.dir, sizeof l.dir, "%s", path);
  if ((slash = strrchr(l.dir, '/')) != NULL) slash[slash == l.dir ? 1 : 0] = '\0';
  else l.dir[0] = '\0';
  if ((text = slurp(path, &n)) == NULL) return -1;
  if (check_events(path, text, n) != 0) {
    free(text);
    return -1;
  }
  if (!yaml_parser_initialize(&parser)) {
    free(text);
    tool_say("%s: out of memory", path);
    return -1;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, n);
  if (!yaml_parser_load(&parser, &doc)) {
    tool_say("%s:%lu: not YAML: %s", path, (unsigned long)parser.problem_mark.line + 1,
             parser.problem ? parser.problem : "?");
    yaml_parser_delete(&parser);
    free(text);
    return -1;
  }
  l.doc = &doc;
  rc = top_level(&l, yaml_document_get_root_node(&doc));
  yaml_document_delete(&doc);
  yaml_parser_delete(&parser);
  free(text);
  if (rc != 0) web_config_free(c);
  return rc;
}

void web_config_free(struct web_config *c)
{
  size_t i;
  for (i = 0; i < c->nusers; i++) {
    free(c->users[i].name);
    free(c->users[i].hash);
  }
  for (i = 0; i < c->nheaders; i++) {
    free(c->headers[i].name);
    free(c->headers[i].value);
  }
  free(c->users);
  free(c->headers);
  if (c->key_pem != NULL) {
    /* A private key: not left in freed memory. */
    explicit_bzero(c->key_pem, strlen(c->key_pem));
    free(c->key_pem);
  }
  free(c->cert_pem);
  free(c->client_ca_pem);
  memset(c, 0, sizeof *c);
}

/* Append ":" [item] to buf unless it is there already. */
static void prio_add(char *buf, size_t n, const char *item)
{
  size_t at = strlen(buf), k = strlen(item);
  const char *p = buf;
  while ((p = strstr(p, item)) != NULL) {
    if (p > buf && p[-1] == '+' && (p[k] == ':' || p[k] == '\0')) return;
    p += k;
  }
  if (at + k + 2 < n) snprintf(buf + at, n - at, ":+%s", item);
}

void web_config_priorities(const struct web_config *c, char *buf, size_t n)
{
  unsigned v, i;
  if (n == 0) return;
  snprintf(buf, n, "NORMAL:-VERS-ALL");
  for (v = c->min_version; v <= c->max_version; v++) {
    char item[16];
    snprintf(item, sizeof item, "VERS-TLS1.%u", v - 0x0301);
    prio_add(buf, n, item);
  }
  /* The suites of TLS 1.2 and older: GnuTLS allows each key exchange
   * listed with each cipher and MAC listed; the cipher_suites given are
   * kept in order (the server's preference, prefer_server_cipher_suites).
   * Without them, Go's defaults: ECDHE with an AEAD cipher (no RSA key
   * exchange, no CBC). */
  snprintf(buf + strlen(buf), n - strlen(buf), ":-KX-ALL");
  if (c->nsuites == 0) {
    prio_add(buf, n, "ECDHE-ECDSA");
    prio_add(buf, n, "ECDHE-RSA");
  }
  for (i = 0; i < c->nsuites; i++) prio_add(buf, n, suite_names[c->suites[i]].kx);
  snprintf(buf + strlen(buf), n - strlen(buf), ":-CIPHER-ALL");
  for (i = 0; i < c->nsuites; i++) prio_add(buf, n, suite_names[c->suites[i]].cipher);
  /* TLS 1.3's own suites, which cipher_suites does not choose (as in
   * Go): GnuTLS names their ciphers as TLS 1.2's AEAD ones, so that with
   * TLS 1.3 allowed these stay allowed for the key exchanges above too. */
  if (c->nsuites == 0 || c->max_version >= 0x0304) {
    prio_add(buf, n, "AES-128-GCM");
    prio_add(buf, n, "AES-256-GCM");
    prio_add(buf, n, "CHACHA20-POLY1305");
  }
  snprintf(buf + strlen(buf), n - strlen(buf), ":-MAC-ALL");
  for (i = 0; i < c->nsuites; i++) prio_add(buf, n, suite_names[c->suites[i]].mac);
  if (c->nsuites == 0 || c->max_version >= 0x0304) prio_add(buf, n, "AEAD");
  if (c->server_order && strlen(buf) + 20 < n)
    snprintf(buf + strlen(buf), n - strlen(buf), ":%%SERVER_PRECEDENCE");
}

/* Equal strings, in a time that depends only on their lengths. */
static int same(const char *a, const char *b)
{
  size_t na = strlen(a), nb = strlen(b), i;
  unsigned char d = na != nb;
  for (i = 0; i < na && i < nb; i++) d |= (unsigned char)(a[i] ^ b[i]);
  return d == 0;
}

const struct web_user *web_config_user(const struct web_config *c, const char *name)
{
  const struct web_user *u = NULL;
  size_t i;
  for (i = 0; i < c->nusers; i++)
    if (same(c->users[i].name, name) && u == NULL) u = &c->users[i];
  return u;
}

int web_config_password_ok(const struct web_user *u, const char *password)
{
  struct crypt_data *cd;
  const char *out;
  int ok;
  if ((cd = calloc(1, sizeof *cd)) == NULL) return 0;
  out = crypt_r(password, u->hash, cd);
  ok = out != NULL && same(out, u->hash);
  explicit_bzero(cd, sizeof *cd);
  free(cd);
  return ok;
}
