/* html_flame.c - the allocation profile of the HTML report (html.h): the
 * top allocating and top promoting functions, and flame graphs of what
 * was allocated and of what is in use, by call stack, as inline SVG; and
 * the one flame graph drawing (html_flame_svg) that the CPU profile's
 * (html_cpu.c) uses too, its figure, colours and attributes its caller's.
 *
 * Every figure comes from libocgc (ocgc_profile_functions,
 * ocgc_profile_tree: the same rules as `ocgc profile` and pprof), none is
 * re-derived from what is drawn.
 *
 * Invariants:
 * - a flame graph is the tree of the stacks merged from the outermost
 *   frame (ocgc_profile_tree's shape), the root ("all") at the bottom; a
 *   frame's width is its figure (bytes, samples) over the root's; a frame narrower than MIN_PX is not drawn (nor its
 *   children, narrower still), and data-drawn / data-frames say how many
 *   were; so at most 960 / MIN_PX frames a row and 34 rows;
 * - each frame's data-fn is its name (escaped by html_text()), data-bytes
 *   (the look's attribute) its figure, data-leaf 1 when it has no child (the function allocated
 *   itself); the root's data-bytes is the section's total;
 * - names are the target's bytes (its executable's symbols): html_text()
 *   everywhere, in text, titles and attributes;
 * - no script: hover texts are <title>s;
 * - a table with a row that is an address (a function not named) is
 *   followed by a note saying so (id ocgc-names-missing). */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"

#define WIDTH 960.0
#define ROW 17.0
#define MIN_PX 0.5
#define TOP_FUNCTIONS 15

static void bytes_text(FILE *f, int64_t b)
{
  char buf[32];
  fprintf(f, "%s%s", b < 0 ? "-" : "", cm_fmt_bytes(buf, sizeof buf, (uint64_t)(b < 0 ? -b : b)));
}

/* A warm colour from the name, the same for a name wherever it is drawn. */
static void colour(const char *name, unsigned *r, unsigned *g, unsigned *b)
{
  uint32_t h = 2166136261u;
  for (; *name != '\0'; name++) h = (h ^ (unsigned char)*name) * 16777619u;
  *r = 205 + h % 50;
  *g = 80 + (h >> 8) % 150;
  *b = 30 + (h >> 16) % 40;
}

/* The frames of [t]'s subtree at [x] wide [w] px, from node [i]. */
static void frames(FILE *f, const struct ocgc_profile_tree *t, int v,
                   const struct html_flame_look *look, uint32_t i, double x, double w,
                   unsigned rows, unsigned *drawn)
{
  const struct ocgc_profile_node *n = &t->node[i];
  double y = (rows - 1 - n->depth) * ROW, cx = x;
  unsigned r, g, b;
  int64_t total = t->node[0].value[v];
  uint32_t c;
  size_t chars = w > 8 ? (size_t)((w - 6) / 6.6) : 0;
  if (i == 0) {
    r = g = b = 190;
  } else if (look->fill != NULL) {
    unsigned rgb[3];
    look->fill(t, i, rgb);
    r = rgb[0], g = rgb[1], b = rgb[2];
  } else {
    colour(n->name, &r, &g, &b);
  }
  (*drawn)++;
  fputs("<g class=\"frame\" data-fn=\"", f);
  html_text(f, i == 0 ? "all" : n->name);
  fprintf(f, "\" %s=\"%" PRId64 "\" data-depth=\"%" PRIu32 "\" data-leaf=\"%d\"", look->attr,
          n->value[v], n->depth, n->first_child == 0);
  if (look->attrs != NULL) look->attrs(f, t, i);
  fputs("><title>", f);
  html_text(f, i == 0 ? "all" : n->name);
  fputs(": ", f);
  look->value_text(f, n->value[v]);
  fprintf(f, " (%.1f%%)</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
          "fill=\"rgb(%u,%u,%u)\"/>", total > 0 ? 100.0 * (double)n->value[v] / (double)total : 0,
          x, y, w, ROW - 1, r, g, b);
  if (chars >= 3) {
    char label[160];
    const char *name = i == 0 ? "all" : n->name;
    size_t len = strlen(name);
    if (chars > sizeof label - 1) chars = sizeof label - 1;
    if (len > chars) {
      memcpy(label, name, chars - 2);
      memcpy(label + chars - 2, "..", 3);
    } else {
      memcpy(label, name, len + 1);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + ROW - 5);
    html_text(f, label);
    fputs("</text>", f);
  }
  fputs("</g>\n", f);
  for (c = n->first_child; c != 0; c = t->node[c].next_sibling) {
    int64_t cv = t->node[c].value[v];
    double cw = total > 0 && cv > 0 ? WIDTH * (double)cv / (double)total : 0;
    if (cw >= MIN_PX) frames(f, t, v, look, c, cx, cw, rows, drawn);
    cx += cw;
  }
}

void html_flame_svg(FILE *f, const struct ocgc_profile_tree *t, int v, const char *id,
                    const char *value_name, const struct html_flame_look *look)
{
  unsigned rows = 1, drawn = 0;
  size_t i;
  if (t->n <= 1 || t->node[0].value[v] <= 0) {
    fputs("<p class=\"note\">nothing in this window.</p>\n", f);
    return;
  }
  /* The rows of the frames drawn: a child is never wider than its parent,
   * so a frame wide enough is drawn, its ancestors too. */
  for (i = 0; i < t->n; i++)
    if (t->node[i].depth + 1 > rows &&
        WIDTH * (double)t->node[i].value[v] / (double)t->node[0].value[v] >= MIN_PX)
      rows = t->node[i].depth + 1;
  fprintf(f, "<svg id=\"%s\" class=\"flame\" viewBox=\"0 0 960 %.0f\" width=\"960\" "
          "height=\"%.0f\" data-total=\"%" PRId64 "\" data-frames=\"%zu\" data-value=\"%s\">\n",
          id, rows * ROW, rows * ROW, t->node[0].value[v], t->n, value_name);
  frames(f, t, v, look, 0, 0, WIDTH, rows, &drawn);
  fprintf(f, "</svg>\n<p class=\"note\" data-drawn=\"%u\">%u of %zu frames drawn (narrower "
          "than half a pixel: left out); the root is every sampled stack, each frame above "
          "the one that called it, as wide as its share of the %s.</p>\n",
          drawn, drawn, t->n, look->what);
}

static void flame(const struct html_ctx *c, const char *id, const char *title,
                  enum ocgc_profile_value v)
{
  static const struct html_flame_look bytes = {"data-bytes", bytes_text, NULL, NULL, "bytes"};
  struct ocgc_profile_tree *t = NULL;
  if (ocgc_profile_tree(c->prof, c->syms, v, &t) != 0) return;
  fprintf(c->f, "<h3>%s</h3>\n", title);
  html_flame_svg(c->f, t, (int)v, id, ocgc_profile_value_name(v), &bytes);
  ocgc_profile_tree_free(t);
}

/* The top functions by [v]'s flat figure: how many of its rows are
 * addresses (functions not named). */
static unsigned top_table(const struct html_ctx *c, const char *id, const char *title,
                          enum ocgc_profile_value v)
{
  struct ocgc_profile_functions *fs = NULL;
  size_t i, rows = 0;
  unsigned unnamed = 0;
  if (ocgc_profile_functions(c->prof, c->syms, v, &fs) != 0) return 0;
  fprintf(c->f, "<h3>%s</h3>\n<table id=\"%s\" class=\"functions\" data-value=\"%s\">\n"
          "<tr><th>function</th><th>flat</th><th>flat %%</th><th>cumulative</th></tr>\n",
          title, id, ocgc_profile_value_name(v));
  {
    int64_t total = 0;
    for (i = 0; i < fs->n; i++) total += fs->fn[i].flat[v];
    for (i = 0; i < fs->n && rows < TOP_FUNCTIONS; i++) {
      const struct ocgc_profile_function *fn = &fs->fn[i];
      if (fn->flat[v] <= 0) break;
      rows++;
      if (strncmp(fn->name, "0x", 2) == 0) unnamed++;
      fputs("<tr data-fn=\"", c->f);
      html_text(c->f, fn->name);
      fprintf(c->f, "\" data-flat=\"%" PRId64 "\" data-cum=\"%" PRId64 "\"><td>", fn->flat[v],
              fn->cum[v]);
      html_text(c->f, fn->name);
      fputs("</td><td>", c->f);
      bytes_text(c->f, fn->flat[v]);
      fprintf(c->f, "</td><td>%.1f%%</td><td>", total > 0 ? 100.0 * (double)fn->flat[v] / (double)total : 0);
      bytes_text(c->f, fn->cum[v]);
      fputs("</td></tr>\n", c->f);
    }
  }
  fputs("</table>\n", c->f);
  if (rows == 0) fputs("<p class=\"note\">nothing in this window.</p>\n", c->f);
  ocgc_profile_functions_free(fs);
  return unnamed;
}

void html_profile(const struct html_ctx *c)
{
  const struct ocgc_memprof *p = c->prof;
  unsigned unnamed;
  fputs("<h2>Which code allocates</h2>\n", c->f);
  if (p == NULL) {
    fputs("<p class=\"note\" id=\"ocgc-profile-none\">no allocation profile: the program's "
          "runtime did not sample its allocations in this window (OCGC_MEMPROF=on, or "
          "<code>ocgc profile PID --rate</code>), or keeps no profile (stock OCaml 5).</p>\n",
          c->f);
    return;
  }
  fprintf(c->f, "<p class=\"note\" id=\"ocgc-profile\" data-rate=\"%" PRIu64 "\" data-samples=\"%"
          PRIu64 "\">sampled every %" PRIu64 " bytes on average, %" PRIu64 " samples%s; figures "
          "are estimates (standard deviation sqrt(bytes x %" PRIu64 ")).%s</p>\n",
          p->rate_bytes, p->samples, p->rate_bytes, p->samples,
          p->overflow_samples ? ", some in the table's overflow row" : "", p->rate_bytes,
          c->syms == NULL ? " Frames are addresses: the program was not there to be named." : "");
  unnamed = top_table(c, "ocgc-top-alloc", "Top allocating functions (bytes allocated)",
                      OCGC_PV_ALLOC_SPACE);
  unnamed += top_table(c, "ocgc-top-promoted",
                       "Top promoting functions (bytes the minor heap promoted)",
                       OCGC_PV_PROMOTED_SPACE);
  /* Names that are missing are said, whatever the reason. */
  if (unnamed > 0)
    fprintf(c->f, "<p class=\"note\" id=\"ocgc-names-missing\" data-unnamed=\"%u\">%u of "
            "these functions are addresses (0x...): %s</p>\n", unnamed, unnamed,
            c->syms == NULL ? "the program was not there to be named."
                            : "their files could not be read, or not in time, or hold no "
                              "symbol for them.");
  flame(c, "ocgc-flame-alloc", "Allocation by call stack", OCGC_PV_ALLOC_SPACE);
  flame(c, "ocgc-flame-inuse", "In use by call stack", OCGC_PV_INUSE_SPACE);
}

/* ---- the window ---------------------------------------------------------------------- */

void html_prof_begin(struct html_prof *hp, const struct ocgc_source *src, int pid, int whole)
{
  struct ocgc_source_info info = OCGC_OPTS_INIT(struct ocgc_source_info);
  struct ocgc_symbols_opts o = OCGC_OPTS_INIT(struct ocgc_symbols_opts);
  const struct ocgc_memprof *first;
  memset(hp, 0, sizeof *hp);
  /* A window from now: no profile now, none at the end either. */
  if (!whole && ocgc_allocwindow_open(src, NULL, &hp->win, NULL) != 0) return;
  first = ocgc_allocwindow_copy(hp->win);
  /* A program that samples has its names read now, while it is surely
   * there (it may exit within the window, and its /proc with it); one that
   * does not yet has them read when a profile is named, if it still is. */
  o.read_now = whole || first->state == OCGC_MP_ON || first->samples > 0;
  if (ocgc_source_info(src, &info) != 0) info.start_time = 0;
  if (ocgc_symbols_open_pid(pid, info.start_time, &o, &hp->syms) != 0) hp->syms = NULL;
}

void html_prof_end(struct html_prof *hp, const struct ocgc_source *src)
{
  if (hp->win == NULL) {
    /* the one copy: everything since sampling began */
    if (ocgc_allocwindow_open(src, NULL, &hp->win, NULL) != 0) return;
    hp->window = ocgc_allocwindow_copy(hp->win);
  } else {
    /* the window's delta; none when the copy failed or the table began
     * anew */
    (void)ocgc_allocwindow_next(hp->win, &hp->delta);
    hp->window = hp->delta;
  }
  /* A table that sampled nothing is no profile: the report says why. */
  if (hp->window != NULL && hp->window->samples == 0 && hp->window->state != OCGC_MP_ON) {
    ocgc_memprof_free(hp->delta);
    hp->delta = NULL;
    hp->window = NULL;
  }
}

void html_prof_free(struct html_prof *hp)
{
  ocgc_allocwindow_free(hp->win);
  ocgc_memprof_free(hp->delta);
  ocgc_symbols_close(hp->syms);
  memset(hp, 0, sizeof *hp);
}
