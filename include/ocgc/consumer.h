/* ocgc/consumer.h - libocgc, the reader of OCaml runtime-event rings: every
 * header of it, one per concept (ocgc/api.h says the conventions).
 *
 * libocgc reads the shared-memory ring files written by the ocgc-patched
 * OCaml 4.13/4.14 runtime and by stock OCaml 5, from outside the process.
 * An agent includes this, or only the headers it uses. */
#ifndef OCGC_CONSUMER_H
#define OCGC_CONSUMER_H

#include <ocgc/api.h>
#include <ocgc/source.h>
#include <ocgc/event.h>
#include <ocgc/cursor.h>
#include <ocgc/attach.h>
#include <ocgc/list.h>
#include <ocgc/rings.h>
#include <ocgc/stream.h>
#include <ocgc/hist.h>
#include <ocgc/agg.h>
#include <ocgc/snapshot.h>
#include <ocgc/slicework.h>
#include <ocgc/interval.h>
#include <ocgc/drain.h>
#include <ocgc/names.h>
#include <ocgc/process.h>
#include <ocgc/watch.h>
#include <ocgc/expo.h>
#include <ocgc/timeline.h>
#include <ocgc/order.h>
#include <ocgc/memprof.h>
#include <ocgc/allocwindow.h>
#include <ocgc/symbols.h>
#include <ocgc/profile.h>
#include <ocgc/pprof_merge.h>
#include <ocgc/cpu.h>
#include <ocgc/unwind.h>
#include <ocgc/cpuprof.h>
#include <ocgc/cpuwindow.h>
#include <ocgc/gccharge.h>
#include <ocgc/exit.h>
#include <ocgc/flight.h>

#endif /* OCGC_CONSUMER_H */
