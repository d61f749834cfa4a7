/* errors.c - ocgc_strerror(): one sentence per error code.  No state. */

#include <string.h>

#include "ocgc/consumer.h"

const char *ocgc_strerror(int err)
{
  switch (err) {
  case 0: return "success";
  case OCGC_E_CORRUPT: return "not a valid ring file (corrupt header or event)";
  case OCGC_E_VERSION: return "ring file of an unsupported version";
  case OCGC_E_NORING: return "the process has no GC event ring";
  case OCGC_E_STALE: return "the ring's process has exited or is gone";
  case OCGC_E_TRUNCATED: return "the ring file was truncated while being read";
  case OCGC_E_PERF_DENIED: return "not allowed to sample the process's CPU (perf_event_open refused)";
  case OCGC_E_IDS_UNKNOWN:
    return "a stock ring of an OCaml 5 newer than the event ids known (OCaml 5.2, 5.3, 5.4): "
           "its numbering must be named (--ids)";
  default: break;
  }
  if (err < 0 && err > -4000) return strerror(-err);
  return "unknown error";
}
