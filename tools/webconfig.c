/* webconfig.c - `ocgc serve --web.config.file FILE` (webconfig.h): the
 * exporter web configuration of Prometheus's exporters, read with libyaml,
 * and the check of a basic-auth password against its bcrypt hash with
 * libcrypt.
 *
 * Invariants: the file and the files it names are read whole, each at most
 * WEB_FILE_MAX bytes; every key is known or an error (a misspelt
 * basic_auth_users must not leave the exporter open); what the file does
 * not say keeps exporter-toolkit's default (TLS 1.2 at least, no client
 * certificate); a setting the toolkit has and ocgc cannot honour
 * (cipher_suites, curve_preferences, client_allowed_sans, rate_limit) is
 * an error saying so, never silently ignored; a password is compared by
 * the hash it gives, in constant time, and an unknown user costs a hash
 * as a known one does; of credentials that passed only a digest is kept. */

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

/* One key of tls_server_config. */
static int tls_key(struct loader *l, const char *k, const yaml_node_t *v)
{
  struct web_config *c = l->c;
  const char *s;
  int b;
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
  /* The server's order is GnuTLS's: nothing to choose. */
  if (strcmp(k, "prefer_server_cipher_suites") == 0) return want_bool(l, v, k, &b);
  if (strcmp(k, "cipher_suites") == 0 || strcmp(k, "curve_preferences") == 0 ||
      strcmp(k, "client_allowed_sans") == 0)
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

/* A bcrypt hash libcrypt takes. */
static int hash_ok(const char *h)
{
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
  out = crypt_r("", h, cd);
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
    size_t i;
    if (name == NULL || name[0] == '\0' || strchr(name, ':') != NULL)
      return bad(l, uk, "a user's name wants a single value, not empty, without ':'%s", "");
    for (i = 0; i < c->nusers; i++)
      if (strcmp(c->users[i].name, name) == 0) return bad(l, uk, "user '%s' given twice", name);
    if (want_scalar(l, uv, name, &hash) != 0) return -1;
    if (!hash_ok(hash))
      return bad(l, uv, "the password of '%s' is not a bcrypt hash of cost 4 to 16 ($2y$..., "
                 "made by `htpasswd -nBC 10 \"\" | tr -d ':\\n'`)", name);
    if ((u = realloc(c->users, (c->nusers + 1) * sizeof *u)) == NULL)
      return bad(l, uv, "out of memory%s", "");
    c->users = u;
    u += c->nusers;
    u->name = u->hash = NULL;
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
      l->c->tls = !(v->type == YAML_SCALAR_NODE && scalar(v)[0] == '\0');
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
  memset(&l, 0, sizeof l);
  l.path = path;
  l.c = c;
  snprintf(l.dir, sizeof l.dir, "%s", path);
  if ((slash = strrchr(l.dir, '/')) != NULL) slash[slash == l.dir ? 1 : 0] = '\0';
  else l.dir[0] = '\0';
  if ((text = slurp(path, &n)) == NULL) return -1;
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

void web_config_priorities(const struct web_config *c, char *buf, size_t n)
{
  size_t at;
  unsigned v;
  at = (size_t)snprintf(buf, n, "NORMAL:-VERS-ALL");
  for (v = c->min_version; v <= c->max_version && at < n; v++)
    at += (size_t)snprintf(buf + at, n - at, ":+VERS-TLS1.%u", v - 0x0301);
}

/* Equal strings, in a time that depends only on their lengths. */
static int same(const char *a, const char *b)
{
  size_t na = strlen(a), nb = strlen(b), i;
  unsigned char d = na != nb;
  for (i = 0; i < na && i < nb; i++) d |= (unsigned char)(a[i] ^ b[i]);
  return d == 0;
}

/* SHA-256 of "user NUL password" into d: 0, or -1. */
static int digest(const char *user, const char *password, unsigned char d[32])
{
  size_t nu = strlen(user), np = strlen(password);
  char *buf = malloc(nu + np + 1);
  int rc;
  if (buf == NULL) return -1;
  memcpy(buf, user, nu + 1);
  memcpy(buf + nu + 1, password, np);
  rc = gnutls_hash_fast(GNUTLS_DIG_SHA256, buf, nu + np + 1, d) == 0 ? 0 : -1;
  explicit_bzero(buf, nu + np + 1);
  free(buf);
  return rc;
}

/* Whether d is among the digests that passed (every one compared, in
 * constant time). */
static int passed_lately(const struct web_config *c, const unsigned char d[32])
{
  unsigned i, k, found = 0;
  for (i = 0; i < c->nok; i++) {
    unsigned char x = 0;
    for (k = 0; k < 32; k++) x |= (unsigned char)(c->ok[i][k] ^ d[k]);
    found |= x == 0;
  }
  return (int)found;
}

int web_config_check(struct web_config *c, const char *user, const char *password)
{
  struct crypt_data *cd;
  const struct web_user *u = NULL;
  const char *out;
  unsigned char d[32];
  size_t i;
  int ok, have_d;
  if (c->nusers == 0) return 0;
  have_d = user != NULL && password != NULL && digest(user, password, d) == 0;
  if (have_d && passed_lately(c, d)) return 1;
  for (i = 0; i < c->nusers; i++)
    if (u == NULL && user != NULL && same(c->users[i].name, user)) u = &c->users[i];
  if ((cd = calloc(1, sizeof *cd)) == NULL) return 0;
  /* An unknown user: a hash all the same, with a known user's cost. */
  out = crypt_r(password != NULL ? password : "", u != NULL ? u->hash : c->users[0].hash, cd);
  ok = u != NULL && out != NULL && same(out, u->hash);
  explicit_bzero(cd, sizeof *cd);
  free(cd);
  if (ok && have_d) {
    memcpy(c->ok[c->next_ok], d, sizeof d);
    c->next_ok = (c->next_ok + 1) % WEB_OK_KEPT;
    if (c->nok < WEB_OK_KEPT) c->nok++;
  }
  return ok;
}
