/* html.h - the HTML report of `ocgc report --html` and `ocgc run --html`
 * (private to tools/; code in html.c: the document, the embedded JSON
 * and the atomic file; html_out.c: the escaping every part uses;
 * html_svg.c: the pictures).
 *
 * One self-contained HTML5 file: inline CSS and SVG, hover texts as SVG
 * <title>s, no script but the report's JSON as data, a
 * Content-Security-Policy that allows nothing else.  The elements, ids,
 * classes and data-* attributes tests read are fixed by
 * docs/html-report.md. */
#ifndef OCGC_TOOLS_HTML_H
#define OCGC_TOOLS_HTML_H

#include "afile.h"
#include <stdint.h>
#include <stdio.h>

#include "report.h"

/* What a document is made of. */
struct html_in {
  const struct rep_meta *m;
  const struct ocgc_source *src;
  const struct ocgc_snapshot *base, *snap; /* as rep_print() takes them */
  const struct ocgc_timeline *tl;               /* may be NULL: no pauses drawn */
  const struct ocgc_memprof *prof; /* the window's allocation profile, or NULL: none */
  struct ocgc_symbols *syms;       /* its frames' names, or NULL: addresses */
};

/* The document into [f].  0, or a negative errno (writing failed). */
int html_write(FILE *f, const struct html_in *in);

/* html_out.c: [s] as HTML text or attribute value: first the tools' text
 * escaping (tool_esc: no control character, no byte outside printable
 * ASCII), then & < > " ' as entities. */
void html_text(FILE *f, const char *s);

/* [c] as HTML's entity when it needs one (written: 1), else 0. */
int html_entity(FILE *f, char c);

/* [json] (n bytes) as the content of a <script type="application/json">:
 * every '<' as \u003c, so nothing in it can close the element. */
void html_json_data(FILE *f, const char *json, size_t n);

/* A file written whole or not at all: a temporary file in the target's
 * folder, renamed over it at the end.  A target that exists and is not a
 * regular file (/dev/stdout, a FIFO, /dev/full) is written in place. */
struct html_file {
  const char *path;
  int replacing;          /* 0: written in place (a special file) */
  struct cm_afile file;   /* replacing: the path's replacement (common/afile.h) */
  FILE *f;                /* over a descriptor of its own */
};
/* Open: 0, or a negative errno (said nothing). */
int html_file_open(struct html_file *hf, const char *path);
/* Flush, sync and rename: 0, or a negative errno (then nothing is left
 * but what was there before).  Closes either way. */
int html_file_commit(struct html_file *hf);
/* Close and remove the temporary file. */
void html_file_abort(struct html_file *hf);

/* For the subcommands: open [path] for the report (a line on stderr and
 * TOOL_EXIT_ERROR or TOOL_EXIT_DENIED if it cannot be), before anything
 * is read, so a bad path costs no run; then write the document into it
 * and commit (a line on stderr and TOOL_EXIT_ERROR if that fails, nothing
 * left behind).  0 on success. */
int html_begin(struct html_file *hf, const char *path);
int html_finish(struct html_file *hf, const struct html_in *in);

/* The allocation profile of a report's window (html_flame.c): libocgc's
 * allocation window (ocgc/allocwindow.h) from when the window begins, its
 * delta at the end; for a whole file, its one copy.  Nothing when the ring
 * keeps no profile or nothing was sampled (the report then says why). */
struct html_prof {
  struct ocgc_allocwindow *win;      /* a live process's window, or the one copy's */
  struct ocgc_memprof *delta;        /* the window's delta, or NULL */
  const struct ocgc_memprof *window; /* what html_in.prof gets, or NULL */
  struct ocgc_symbols *syms;         /* the live process's names, or NULL */
};
/* A live process [pid] (start time of [src]): its names, and the first
 * copy of a window from now; or with [whole] (a process ocgc runs, whose
 * profile is its whole life and which may exit before the end), no copy
 * and its names read at once. */
void html_prof_begin(struct html_prof *hp, const struct ocgc_source *src, int pid, int whole);
/* The window's end (or a file's one copy: html_prof_begin not called). */
void html_prof_end(struct html_prof *hp, const struct ocgc_source *src);
void html_prof_free(struct html_prof *hp);

/* A /proc sample of live process [pid] into [tl] (nothing if it is gone). */
void html_sample(struct ocgc_timeline *tl, int pid);

/* ---- between html.c and html_svg.c ------------------------------------------------ */

struct html_ctx {
  FILE *f;
  const struct rep_figures *x;
  const struct ocgc_snapshot *snap;
  const struct ocgc_timeline *tl;
  uint64_t t0, span;   /* the window: start (producer clock) and length, ns */
  const struct ocgc_memprof *prof; /* html_in's */
  struct ocgc_symbols *syms;
  const struct rep_cpu *cpu;       /* html_in.m's, or NULL */
};

void html_timeline(const struct html_ctx *c);
void html_hists(const struct html_ctx *c);
void html_series(const struct html_ctx *c);
void html_causes(const struct html_ctx *c);
/* html_flame.c: top functions and flame graphs of the allocation profile. */
void html_profile(const struct html_ctx *c);

/* How a flame graph says its figure (html_flame_svg). */
struct html_flame_look {
  const char *attr;                          /* "data-bytes", "data-samples" */
  void (*value_text)(FILE *f, int64_t v);    /* in a frame's <title> */
  /* node i's fill (i > 0), or NULL: a warm colour from its name */
  void (*fill)(const struct ocgc_profile_tree *t, uint32_t i, unsigned rgb[3]);
  /* more attributes of node i's <g> (" data-phase=..."), or NULL */
  void (*attrs)(FILE *f, const struct ocgc_profile_tree *t, uint32_t i);
  const char *what;                          /* "bytes", "samples": the note's */
};
/* [t] (ocgc_profile_tree's shape) as <svg id=[id] class="flame"> of its
 * figure value[v] (data-value [value_name]) and the note saying how many
 * frames were drawn; a note "nothing in this window" when it is empty. */
void html_flame_svg(FILE *f, const struct ocgc_profile_tree *t, int v, const char *id,
                    const char *value_name, const struct html_flame_look *look);

/* html_cpu.c: "Where the CPU goes", the CPU profile of the window
 * (rep_meta.cpu): the GC shares, the samples by phase with their colours,
 * the top functions and the flame graph coloured by phase. */
void html_cpu(const struct html_ctx *c);

#endif /* OCGC_TOOLS_HTML_H */
