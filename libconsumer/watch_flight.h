/* watch_flight.h - a watched process's flight recorder (private to
 * libocgc): its history, its identity taken while it lives, the triggers
 * and the recordings the watch makes of it (watch_flight.c). */
#ifndef OCGC_WATCH_FLIGHT_H
#define OCGC_WATCH_FLIGHT_H

#include "ocgc/flight.h"
#include "ocgc/watch.h"

struct wflight;

/* A process's recorder when [o] asks for a history or a folder (else
 * *out NULL): 0 or -ENOMEM.  Its identity (executable, build id) is read
 * now, while the process lives. */
int wflight_new(const struct ocgc_watch_opts *o, int pid, struct wflight **out);
void wflight_free(struct wflight *fl); /* NULL: nothing */
/* Its history and pause trigger fed by the process's aggregator. */
void wflight_agg_opts(struct wflight *fl, struct ocgc_agg_opts *go);
/* A poll turn at [now]: once a second, its memory sampled and the
 * triggers of memory and heap growth asked; a trigger that fired records
 * (in the folder's cooldown: dropped). */
void wflight_turn(struct wflight *fl, const struct ocgc_watch_opts *o,
                  const struct ocgc_watched *pub, const struct ocgc_source *src, uint64_t now);
/* Whether its memory is sampled at this turn ([now]): the caller reads
 * what the sample takes (the memory cgroup) first. */
int wflight_sample_due(const struct wflight *fl, uint64_t now);
/* [pub] left the set: recorded if it ended without its producer's exit
 * mark (not an exec: the process lives on). */
void wflight_gone(struct wflight *fl, const struct ocgc_watch_opts *o,
                  const struct ocgc_watched *pub, const struct ocgc_source *src);
/* A recording of [pub] now, for [reason] (name: the file's name): 0,
 * -ENOENT (no folder), -EAGAIN (cooldown), or -errno. */
int wflight_record(struct wflight *fl, const struct ocgc_watch_opts *o,
                   const struct ocgc_watched *pub, const struct ocgc_source *src, int reason,
                   const char *detail, char *name, size_t n);

#endif
