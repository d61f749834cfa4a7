/* serve_giveway.c - which connection gives way when `ocgc serve`'s table
 * (or an address's share of it) is full: of the few oldest connections
 * whose request head is not whole, the one idle longest (serve.h).
 *
 * Why not simply the oldest: under a crowd that reconnects as fast as it
 * is cut (slowloris from the scraper's own address), the table turns over
 * every [per_address] arrivals, and a scraper whose head takes a few
 * round trips (a TLS handshake on a loaded machine: 138 ms once, against
 * a turnover of some 300 ms) became the oldest head and was cut.  A slow
 * client is slow in sending: between its bytes it is idle; a client that
 * sends its head as fast as the server reads it is not.  So among the
 * GIVEWAY_LOOK oldest heads, the one whose socket has received nothing for
 * longest gives way (the kernel's TCP_INFO tcpi_last_data_recv), a socket
 * with bytes not read yet counting as not idle at all (the server owes it
 * a turn: it is not the slow one); on a tie, or where the kernel cannot
 * say (a unix socket), the older.
 *
 * Invariants: at most GIVEWAY_LOOK system calls (two each) per choice,
 * whatever the table holds; only the descriptors given are asked, and
 * only asked (getsockopt, ioctl FIONREAD): nothing is read or changed. */

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "serve.h"

/* How long [fd] has received nothing, ms: 0 when bytes wait unread;
 * [age_ms] where the kernel cannot say. */
static uint64_t idle_ms(int fd, uint64_t age_ms)
{
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  int unread = 0;
  if (ioctl(fd, FIONREAD, &unread) == 0 && unread > 0) return 0;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
      len < offsetof(struct tcp_info, tcpi_last_data_recv) + sizeof ti.tcpi_last_data_recv)
    return age_ms;
  return ti.tcpi_last_data_recv;
}

size_t serve_giveway_pick(const struct serve_giveway *c, size_t n, uint64_t now_ns)
{
  size_t i, best = 0;
  uint64_t best_idle = 0;
  if (n > GIVEWAY_LOOK) n = GIVEWAY_LOOK;
  for (i = 0; i < n; i++) {
    uint64_t age = now_ns > c[i].head_since_ns ? (now_ns - c[i].head_since_ns) / 1000000u : 0;
    uint64_t idle = idle_ms(c[i].fd, age);
    /* strictly more idle: on a tie the older (c is oldest first) */
    if (i == 0 || idle > best_idle) best = i, best_idle = idle;
  }
  return best;
}
