/* serve_reload.c - SIGHUP for `ocgc serve` (serve.h): it re-reads
 * --web.config.file, as Prometheus's exporters do; it never stops serve
 * (the default action of SIGHUP would kill it, leaving its unix socket
 * and --textfile behind).
 *
 * Invariants: the handler only stores into serve_hup (a sig_atomic_t),
 * which serve.c's main loop takes; a file that does not load, or that
 * changes what TLS the listening socket was started with (the
 * certificate, key, client CA, client_auth_type, versions, cipher suites
 * and their order, or TLS on or off: libmicrohttpd holds them from its
 * start), leaves the configuration
 * as it was, said in one line on stderr; what may change (basic_auth_users
 * and http_server_config.headers) is swapped whole by the caller, never
 * half-read by a request (serve.c's web lock). */

#include <signal.h>
#include <string.h>

#include "common.h"
#include "serve.h"
#include "webconfig.h"

volatile sig_atomic_t serve_hup;

static void on_hup(int sig)
{
  (void)sig;
  serve_hup = 1;
}

void serve_reload_catch(struct sigaction *old)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_hup;
  /* The other threads' reads and waits go on as if nothing came. */
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  serve_hup = 0;
  sigaction(SIGHUP, &sa, old);
}

void serve_reload_restore(const struct sigaction *old)
{
  sigaction(SIGHUP, old, NULL);
}

/* Whether two strings, either maybe NULL, are the same. */
static int same(const char *a, const char *b)
{
  return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

int serve_reload_web(const char *path, const struct web_config *cur, struct web_config *fresh)
{
  memset(fresh, 0, sizeof *fresh);
  if (path == NULL) {
    tool_say("SIGHUP: no --web.config.file to read again; nothing changed");
    return -1;
  }
  if (web_config_load(path, fresh) != 0) { /* said where */
    tool_say("SIGHUP: %s does not load: the configuration in use is kept", path);
    return -1;
  }
  if (fresh->tls != cur->tls || !same(fresh->cert_pem, cur->cert_pem) ||
      !same(fresh->key_pem, cur->key_pem) || !same(fresh->client_ca_pem, cur->client_ca_pem) ||
      fresh->client_auth != cur->client_auth || fresh->min_version != cur->min_version ||
      fresh->max_version != cur->max_version || fresh->nsuites != cur->nsuites ||
      memcmp(fresh->suites, cur->suites, sizeof fresh->suites) != 0 ||
      fresh->server_order != cur->server_order) {
    web_config_free(fresh);
    memset(fresh, 0, sizeof *fresh);
    tool_say("SIGHUP: %s changes tls_server_config, which takes a restart: the configuration "
             "in use is kept", path);
    return -1;
  }
  tool_say("SIGHUP: %s read again (%zu users, %zu headers)", path, fresh->nusers, fresh->nheaders);
  return 0;
}
