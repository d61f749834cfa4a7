/* html_cpu.c - "Where the CPU goes" in the HTML report (html.h): the CPU
 * profile of the report's window (rep_meta.cpu, report_cpu.c), when
 * --cpu asked for one: the GC share its samples give beside the one the
 * ring measures over the same window, the samples of each gc_phase with
 * its colour (the legend), the top functions by their samples, and the
 * flame graph of the stacks with the phase as the outermost frame, each
 * frame in its phase's colour (drawn by html_flame_svg: one flame graph
 * drawing for allocations and CPU).
 *
 * Invariants:
 * - every figure is rep_cpu's, the same the report's JSON member "cpu"
 *   says (shares with the JSON's 6 decimals), none worked out from what
 *   is drawn;
 * - a phase has one colour, in the legend and in every frame under it
 *   (data-phase on each frame, data-fill on the legend's key);
 * - function names are the target's bytes: html_text() everywhere. */

#include <inttypes.h>
#include <string.h>

#include "html.h"

/* The phases' colours: the mutator warm, the collector's phases cool and
 * apart from each other (minor blue, the major's greens, compaction red,
 * the collector's dispatch grey). */
static const unsigned phase_rgb[OCGC_GC_PHASE_COUNT][3] = {
  [OCGC_GC_MUTATOR] = {240, 160, 70},     [OCGC_GC_MINOR] = {70, 130, 200},
  [OCGC_GC_MAJOR_MARK] = {40, 120, 60},   [OCGC_GC_MAJOR_SWEEP] = {110, 180, 90},
  [OCGC_GC_MAJOR_CLEAN] = {170, 210, 140}, [OCGC_GC_MAJOR] = {60, 160, 150},
  [OCGC_GC_COMPACTION] = {200, 60, 60},   [OCGC_GC_COLLECTOR] = {150, 150, 160},
};

/* The phase a frame lies under: its ancestor of depth 1, "[phase]". */
static int node_phase(const struct ocgc_profile_tree *t, uint32_t i)
{
  unsigned guard = 0;
  while (t->node[i].depth > 1 && guard++ < 4096) i = t->node[i].parent;
  return t->node[i].depth == 1 ? rep_cpu_phase_of(t->node[i].name) : -1;
}

static void fill(const struct ocgc_profile_tree *t, uint32_t i, unsigned rgb[3])
{
  int p = node_phase(t, i);
  memcpy(rgb, phase_rgb[p >= 0 ? p : OCGC_GC_COLLECTOR], sizeof phase_rgb[0]);
}

static void attrs(FILE *f, const struct ocgc_profile_tree *t, uint32_t i)
{
  int p = i == 0 ? -1 : node_phase(t, i);
  if (p >= 0) fprintf(f, " data-phase=\"%s\"", ocgc_gc_phase_name((enum ocgc_gc_phase)p));
}

static void samples_text(FILE *f, int64_t v) { fprintf(f, "%" PRId64 " samples", v); }

static double pct(uint64_t part, uint64_t whole)
{
  return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void legend(FILE *f, const struct rep_cpu *cpu)
{
  int p;
  fputs("<p class=\"legend\" id=\"ocgc-cpu-legend\">", f);
  for (p = 0; p < OCGC_GC_PHASE_COUNT; p++) {
    const unsigned *c = phase_rgb[p];
    const char *name = ocgc_gc_phase_name((enum ocgc_gc_phase)p);
    if (cpu->phase[p] == 0 && p != OCGC_GC_MUTATOR) continue;
    fprintf(f, "<span class=\"phase\" data-phase=\"%s\" data-count=\"%" PRIu64 "\" "
            "data-fill=\"rgb(%u,%u,%u)\"><svg class=\"swatch\" width=\"12\" height=\"12\">"
            "<rect width=\"12\" height=\"12\" fill=\"rgb(%u,%u,%u)\"/></svg>%s: %" PRIu64
            " (%.1f%%)</span>", name, cpu->phase[p], c[0], c[1], c[2], c[0], c[1], c[2], name,
            cpu->phase[p], pct(cpu->phase[p], cpu->samples));
  }
  fputs("</p>\n", f);
}

static void top_table(FILE *f, const struct rep_cpu *cpu)
{
  unsigned i;
  fputs("<h3>Top functions by CPU samples (the function running when sampled)</h3>\n"
        "<table id=\"ocgc-top-cpu\" class=\"functions\" data-value=\"samples\">\n"
        "<tr><th>function</th><th>samples</th><th>share</th></tr>\n", f);
  for (i = 0; i < cpu->ntop; i++) {
    fputs("<tr data-fn=\"", f);
    html_text(f, cpu->top[i].name);
    fprintf(f, "\" data-flat=\"%" PRIu64 "\"><td>", cpu->top[i].samples);
    html_text(f, cpu->top[i].name);
    fprintf(f, "</td><td>%" PRIu64 "</td><td>%.1f%%</td></tr>\n", cpu->top[i].samples,
            pct(cpu->top[i].samples, cpu->samples));
  }
  fputs("</table>\n", f);
}

void html_cpu(const struct html_ctx *c)
{
  static const struct html_flame_look look = {"data-samples", samples_text, fill, attrs,
                                              "samples"};
  const struct rep_cpu *cpu = c->cpu;
  FILE *f = c->f;
  char ring[48] = "-";
  fputs("<h2>Where the CPU goes</h2>\n", f);
  if (cpu == NULL || !cpu->have) {
    fprintf(f, "<p class=\"note\" id=\"ocgc-cpu-none\">no CPU profile: %s</p>\n",
            cpu == NULL ? "not asked for (<code>ocgc report PID --cpu</code>, <code>ocgc run "
                          "--cpu FILE</code>: sampling costs the program a little CPU, so it "
                          "is off unless asked)."
                        : "sampling was refused or failed (ocgc said why on stderr).");
    return;
  }
  if (cpu->ring_known) snprintf(ring, sizeof ring, "%.6f", cpu->gc_share_ring);
  fprintf(f, "<p class=\"note\" id=\"ocgc-cpu\" data-samples=\"%" PRIu64 "\" data-gc-samples=\"%"
          PRIu64 "\" data-frequency-hz=\"%" PRIu64 "\" data-window-ns=\"%" PRIu64 "\" "
          "data-threads=\"%" PRIu64 "\" data-lost=\"%" PRIu64 "\" data-gc-share-samples=\"%.6f\" "
          "data-gc-share-ring=\"%s\">%" PRIu64 " samples at %" PRIu64 " Hz over %.1f s from %"
          PRIu64 " threads (%" PRIu64 " lost). <b>The collector: %.1f%% of the samples</b> "
          "(by their stacks)",
          cpu->samples, cpu->gc_samples, cpu->frequency_hz, cpu->window_ns, cpu->threads_seen,
          cpu->lost, cpu->gc_share_samples, ring, cpu->samples, cpu->frequency_hz,
          (double)cpu->window_ns / 1e9, cpu->threads_seen, cpu->lost,
          100.0 * cpu->gc_share_samples);
  if (cpu->ring_known)
    fprintf(f, ", <b>%.1f%% of the wall time</b> in collections by the ring over the same "
            "window", 100.0 * cpu->gc_share_ring);
  else
    fputs("; no ring was read, so no share by the ring", f);
  fputs(". Samples are of user-space CPU only; the ring's share is of wall time, so a "
        "program that waits has a lower one.</p>\n", f);
  legend(f, cpu);
  top_table(f, cpu);
  fputs("<h3>CPU by call stack, coloured by GC phase</h3>\n", f);
  if (cpu->tree != NULL)
    html_flame_svg(f, cpu->tree, 0, "ocgc-flame-cpu", "samples", &look);
}
