/* webconfig.h - the exporter web configuration file of `ocgc serve
 * --web.config.file` (webconfig.c): the YAML file Prometheus's own
 * exporters read (exporter-toolkit's format), so that one file serves
 * node_exporter and ocgc alike.  Private to tools/. */
#ifndef OCGC_TOOLS_WEBCONFIG_H
#define OCGC_TOOLS_WEBCONFIG_H

#include <stddef.h>

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
};

struct web_header {
  char *name, *value;
};

/* Credentials that passed lately, as SHA-256 of "user NUL password": a
 * scraper's every request would otherwise cost a bcrypt (60 ms at cost
 * 10) on the one HTTP thread.  What is kept is not the password. */
#define WEB_OK_KEPT 8

struct web_config {
  int tls;                    /* tls_server_config given: serve HTTPS */
  char *cert_pem, *key_pem;   /* the server's certificate chain and key (PEM) */
  char *client_ca_pem;        /* NULL: none */
  enum web_client_auth client_auth;
  unsigned min_version, max_version; /* 0x0301 (TLS 1.0) .. 0x0304 (TLS 1.3) */
  struct web_user *users;     /* basic_auth_users; nusers 0: no authentication */
  size_t nusers;
  struct web_header *headers; /* http_server_config.headers, added to every answer */
  size_t nheaders;
  /* web_config_check's memory (its caller's thread only: libmicrohttpd's). */
  unsigned char ok[WEB_OK_KEPT][32];
  unsigned nok, next_ok;
};

/* The file at [path] into *c: 0, or -1 after a line on stderr saying what
 * is wrong and where (file:line: ...).  Files it names (cert_file,
 * key_file, client_ca_file) are read now, relative to the folder of
 * [path] unless absolute.  Unknown keys are errors, as for the exporters
 * (a misspelt key must not silently turn authentication off). */
int web_config_load(const char *path, struct web_config *c);
void web_config_free(struct web_config *c);

/* The GnuTLS priority string of c's versions ("NORMAL:-VERS-ALL:+VERS-...")
 * into buf (n bytes). */
void web_config_priorities(const struct web_config *c, char *buf, size_t n);

/* Whether [user] with [password] is one of c's users: the password
 * checked against the user's bcrypt hash by libcrypt, and the result
 * compared in constant time; an unknown user costs a hash too, so that
 * the time of an answer does not say which names exist.  Credentials that
 * passed are remembered (WEB_OK_KEPT, by digest): their next check costs
 * a SHA-256.  One thread at a time. */
int web_config_check(struct web_config *c, const char *user, const char *password);

#endif /* OCGC_TOOLS_WEBCONFIG_H */
