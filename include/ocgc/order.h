/* ocgc/order.h - a stream's spans in the order a trace viewer reads them.
 * The collection stream (ocgc/stream.h) hands over each span as it closes:
 * children before their parents.  A trace wants each tree written parents
 * first, the siblings of one start in begin order (viewers nest
 * same-timestamp events in the order they read them), so the spans of an
 * outermost span are held until it closes, then given sorted.
 *
 * What is held is bounded whatever the target writes (an outer span begun
 * and never ended would otherwise hold every span after it): past
 * max_held closed spans in all rings together, the ring holding the most
 * gives its held spans early, sorted, with the spans still open around
 * them as begins (their ends come when they close), merged into that
 * order.  Nothing is cut or split, the nesting stays proper and the
 * same-timestamp order too.  Memory: each ring's array holds at most
 * max_held + 1 + OCGC_STREAM_MAX_DEPTH spans of 32 bytes, is freed after
 * a flush when larger than 16, and grows by doubling: about 2 x max_held +
 * 16 x rings spans in all, and qsort's buffer for one ring's. */
#ifndef OCGC_PUBLIC_ORDER_H
#define OCGC_PUBLIC_ORDER_H

#include <ocgc/stream.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A span orderer (opaque). */
struct ocgc_span_order;

#define OCGC_SPAN_ORDER_MAX_HELD 65536u /**< max_held's default (2 MiB) */

/** A span given in order: closed (open 0), or still open and given early
 * (open 1: its begin; its end comes through on_end).  [span] is the
 * orderer's memory, valid during the call; its cause is OCGC_CAUSE_NONE
 * unless it is a collection's. */
typedef void (*ocgc_ordered_fn)(const struct ocgc_span *span, int open, void *ctx);

struct ocgc_span_order_opts {
  size_t sz;                  /**< sizeof(struct ocgc_span_order_opts) */
  size_t max_held;            /**< closed spans held in all rings, at most; 0: the default */
  ocgc_ordered_fn on_span;    /**< each span, in order (required) */
  /** The end of a span given open (its cut says why, if not its own end);
   * the spans held inside it were given before. */
  void (*on_end)(const struct ocgc_span *span, void *ctx);
  /** Ring [ring] gave [held] held spans and [open] open ones early. */
  void (*on_early)(unsigned ring, size_t held, unsigned open, void *ctx);
  void *ctx;                  /**< given to the callbacks */
};

/** An orderer for the spans of [nrings] rings (1 to 4096): 0, -EINVAL
 * (a bad option, no on_span) or -ENOMEM. */
OCGC_API int ocgc_span_order_new(unsigned nrings, const struct ocgc_span_order_opts *opts,
                                 struct ocgc_span_order **out);
OCGC_API void ocgc_span_order_free(struct ocgc_span_order *o); /**< NULL: nothing */

/** The stream [stream] closed [span] (from its on_span): held, or given
 * with its tree once its outermost span closed; with [no_early] nonzero
 * nothing is given early (the caller is cutting every span, as at
 * ocgc_stream_lost() or ocgc_stream_finish(), and flushes after).  The
 * stream is asked for the spans still open when a ring gives early.
 * Returns 0, or -ENOMEM (the span is dropped, or an early give could not
 * be made: the trace is not whole). */
OCGC_API int ocgc_span_order_add(struct ocgc_span_order *o, const struct ocgc_stream *stream,
                                 const struct ocgc_span *span, int no_early);

/** Give what ring [ring] holds now, sorted (after its spans were cut). */
OCGC_API void ocgc_span_order_flush(struct ocgc_span_order *o, unsigned ring);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_ORDER_H */
