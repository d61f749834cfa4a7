/* webconfig.h - the exporter web configuration file of `ocgc serve
 * --web.config.file` (webconfig.c): the YAML file Prometheus's own
 * exporters read (exporter-toolkit's format), so that one file serves
 * node_exporter and ocgc alike.  Private to tools/. */
#ifndef OCGC_TOOLS_WEBCONFIG_H
#define OCGC_TOOLS_WEBCONFIG_H

#include <stddef.h>
#include <stdint.h>

/* Go's tls.ClientAuthType names, in their order. */
enum web_client_auth {
  WEB_NO_CLIENT_CERT = 0,         /* NoClientCert (the default) */
  WEB_REQUEST_CLIENT_CERT,        /* RequestClientCert: asked, not checked */
  WEB_REQUIRE_ANY_CLIENT_CERT,    /* RequireAnyClientCert: one, not checked */
  WEB_VERIFY_CLIENT_CERT_IF_GIVEN,/* VerifyClientCertIfGiven */
  WEB_REQUIRE_AND_VERIFY_CLIENT_CERT /* RequireAndVerifyClientCert */
};

struct web_user {
  char *name;
  char *hash;                 /* bcrypt ($2a$, $2b$, $2y$) */
  uint64_t check_ns;          /* what one check of it took at load */
  unsigned cost;              /* bcrypt's: 2^cost rounds */
};

struct web_header {
  char *name, *value;
};

/* How deep a file may nest (mappings and sequences): the format needs 3
 * levels; libyaml's scanner costs time quadratic in the depth. */
#define WEB_DEPTH_MAX 64
#define WEB_SUITES_MAX 32           /* cipher_suites given */
#define WEB_PRIORITIES_MAX 512      /* web_config_priorities' string */

struct web_config {
  int tls;                    /* tls_server_config given: serve HTTPS */
  char *cert_pem, *key_pem;   /* the server's certificate chain and key (PEM) */
  char *client_ca_pem;        /* NULL: none */
  enum web_client_auth client_auth;
  unsigned min_version, max_version; /* 0x0301 (TLS 1.0) .. 0x0304 (TLS 1.3) */
  /* cipher_suites (TLS 1.2 and older), indices in webconfig.c's table, in
   * the file's order; none: Go's defaults (ECDHE with an AEAD cipher). */
  unsigned char suites[WEB_SUITES_MAX];
  unsigned nsuites;
  int server_order;           /* prefer_server_cipher_suites (default true) */
  struct web_user *users;     /* basic_auth_users; nusers 0: no authentication */
  size_t nusers;
  uint64_t slowest_ns;        /* the longest check_ns of the users */
  unsigned max_cost;          /* the highest cost of the users */
  struct web_header *headers; /* http_server_config.headers, added to every answer */
  size_t nheaders;
};

/* The file at [path] into *c: 0, or -1 after a line on stderr saying what
 * is wrong and where (file:line: ...).  Files it names (cert_file,
 * key_file, client_ca_file) are read now, relative to the folder of
 * [path] unless absolute.  Unknown keys are errors, as for the exporters
 * (a misspelt key must not silently turn authentication off), and so are
 * a key given twice in one mapping, an empty tls_server_config, a second
 * document and nesting past WEB_DEPTH_MAX.  Each user's hash is checked
 * once (its time kept: check_ns). */
int web_config_load(const char *path, struct web_config *c);
void web_config_free(struct web_config *c);

/* The GnuTLS priority string of c's versions and suites into buf (n
 * bytes, WEB_PRIORITIES_MAX is enough). */
void web_config_priorities(const struct web_config *c, char *buf, size_t n);

/* The user named [name] (compared with every name, in a time that does
 * not depend on where they differ), or NULL. */
const struct web_user *web_config_user(const struct web_config *c, const char *name);

/* Whether [password] is the one [u]'s bcrypt hash was made of (libcrypt;
 * the hashes compared in constant time).  Costs the hash's time (2^cost
 * rounds): never on the HTTP thread (serve_auth.c's worker). */
int web_config_password_ok(const struct web_user *u, const char *password);

#endif /* OCGC_TOOLS_WEBCONFIG_H */
