// test_cxx.cc - libocgc from C++: monitoring agents are often C++, so the
// installed headers (consumer.h, version.h, wire.h) must compile as C++ (this file is
// built with -std=c++11 -Wall -Wextra -Wpedantic -Werror) and the library
// must link and work from it.  It prints "ok: ..." or "FAIL: ..." per check
// and exits 1 if any failed.
#include <ocgc/consumer.h>
#include <ocgc/version.h>
#include <ocgc/wire.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

// The wire format's layout seen by a C++ compiler is the C one.
static_assert(sizeof(struct ocgc_wire_header) == 64, "header size");
static_assert(offsetof(struct ocgc_wire_header, custom_events_offset) == 56, "offsets");

static int failures, checks;

// Each check one TAP result (make check's tap-driver.sh), the plan at the end.
static void check(bool ok, const char *what)
{
  std::printf("%s %d - %s\n", ok ? "ok" : "not ok", ++checks, what);
  if (!ok) failures++;
}

int main()
{
  struct ocgc_open_opts oo = OCGC_OPTS_INIT(struct ocgc_open_opts);
  struct ocgc_attach_opts ao = OCGC_OPTS_INIT(struct ocgc_attach_opts);
  check(oo.sz == sizeof oo && oo.ids == OCGC_IDS_AUTO, "OCGC_OPTS_INIT: sz set, the rest zero");
  check(ao.sz == sizeof ao && ao.dir == nullptr && ao.wait_ms == 0, "attach options likewise");

  struct ocgc_hist *h = nullptr;
  check(ocgc_hist_new(&h) == 0 && h != nullptr, "ocgc_hist_new");
  for (uint64_t i = 1; i <= 1000; i++) ocgc_hist_record(h, i * 1000);
  check(ocgc_hist_count(h) == 1000, "1000 values recorded");
  uint64_t p50 = ocgc_hist_percentile(h, 50);
  check(p50 >= 499500 && p50 <= 500500, "p50 of 1..1000 us is 500 us within 0.1%");
  check(ocgc_hist_max(h) >= 999000 && ocgc_hist_max(h) <= 1001000, "max is 1 ms within 0.1%");
  ocgc_hist_free(h);

  struct ocgc_source *src = nullptr;
  check(ocgc_source_open_path("/nonexistent/ocgc-cxx.events", &oo, &src) == -ENOENT &&
            src == nullptr,
        "opening a missing file gives -ENOENT");
  check(std::strlen(ocgc_strerror(OCGC_E_STALE)) > 0, "ocgc_strerror");
  check(std::strcmp(ocgc_version(), OCGC_VERSION_STRING) == 0, "ocgc_version() is the header's");

  struct ocgc_wire_header g = {};
  uint64_t size = ocgc_wire_layout(&g, 1, 1024, ocgc_wire_ext_size(1));
  check(g.headers_offset == OCGC_WIRE_HEADER_SIZE + ocgc_wire_ext_size(1) &&
            size == g.custom_events_offset +
                        uint64_t(OCGC_WIRE_USER_EVENTS) * OCGC_WIRE_USER_NAME_LEN,
        "ocgc_wire_layout");
  check(std::strcmp(ocgc_kind_name(OCGC_KIND_MINOR), "minor") == 0, "ocgc_kind_name");
  struct ocgc_ids_info ii = OCGC_OPTS_INIT(struct ocgc_ids_info);
  check(ii.sz == sizeof ii && ocgc_source_ids(nullptr, &ii) == -EINVAL, "ocgc_source_ids");
  ocgc_stream_settle(nullptr);

  // the CPU window (ocgc/cpuwindow.h): its refusals need no process
  struct ocgc_cpuwindow_opts wo = OCGC_OPTS_INIT(struct ocgc_cpuwindow_opts);
  struct ocgc_cpuwindow *w = nullptr;
  enum ocgc_cpuwindow_part part = OCGC_CPUWINDOW_PROFILE;
  check(ocgc_cpuwindow_open(0, 0, nullptr, &wo, &w, &part) == -EINVAL && w == nullptr,
        "ocgc_cpuwindow_open: no pid 0");
  wo.frequency_hz = 1001;
  check(ocgc_cpuwindow_open(1, 0, nullptr, &wo, &w, nullptr) == -EINVAL && w == nullptr,
        "ocgc_cpuwindow_open: frequency past 1000");
  check(ocgc_cpuwindow_turn(nullptr) == -EINVAL && ocgc_cpuwindow_profile(nullptr) == nullptr,
        "ocgc_cpuwindow_turn, _profile: NULL");
  ocgc_cpuwindow_free(nullptr);

  // the allocation window (ocgc/allocwindow.h): its refusals need no process
  struct ocgc_allocwindow_opts ow = OCGC_OPTS_INIT(struct ocgc_allocwindow_opts);
  struct ocgc_allocwindow *aw = nullptr;
  struct ocgc_allocwindow_stats as = OCGC_OPTS_INIT(struct ocgc_allocwindow_stats);
  int holders[OCGC_MP_LEASE_SLOTS];
  ow.rate_bytes = 512 * 1024;
  check(ocgc_allocwindow_open(nullptr, &ow, &aw, holders) == -EINVAL && aw == nullptr,
        "ocgc_allocwindow_open: no source");
  check(ocgc_allocwindow_answer(nullptr) == -EINVAL && ocgc_allocwindow_copy(nullptr) == nullptr &&
            ocgc_allocwindow_stats(nullptr, &as) == -EINVAL && ocgc_allocwindow_end(nullptr) == 0,
        "ocgc_allocwindow_answer, _copy, _stats, _end: NULL");
  ocgc_allocwindow_free(nullptr);
  std::printf("1..%d\n", checks);
  return failures ? 1 : 0;
}
