/* html.c - the HTML report's document (html.h): head, facts, the sections
 * (drawn by html_svg.c, html_series.c, html_flame.c, html_cpu.c), the
 * embedded JSON, and the file it goes to; the page, on top of the files
 * that draw it (none calls back here: the escaping they share is
 * html_out.c's).
 *
 * Invariants:
 * - the document runs nothing: a Content-Security-Policy of default-src
 *   'none' (inline style and data: images only), no script element but
 *   the JSON data block, no event attribute, no external reference;
 * - every string a target or a user chose (program name, versions, the
 *   command line, paths) goes out through html_text() (html_out.c):
 *   tool_esc() first (no control character, nothing outside printable
 *   ASCII), then the five HTML entities (a recording's section is the text report's, whose
 *   target strings went through tool_esc() there: the entities only); the
 *   JSON block is rep_print_json()'s own bytes
 *   with each '<' as \u003c, byte for byte `ocgc report --json` otherwise;
 * - the file is written whole or not at all (html_file_*): a temporary
 *   file in the same folder, synced, then renamed; a failure removes it. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "html.h"

#define CSP "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

static const char style[] =
  "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1000px;color:#222;"
  "background:#fff}h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;"
  "border-bottom:1px solid #ccc}dl{display:grid;grid-template-columns:max-content auto;"
  "gap:.2em 1em}dt{font-weight:600}dd{margin:0}svg{display:block;margin:.4em 0}"
  "svg text{font-size:11px;fill:#444}.axis{stroke:#999;stroke-width:1}"
  ".grid{stroke:#eee;stroke-width:1}.pause,.key{fill:#7f7f7f;fill-opacity:.75}"
  ".pause[data-kind=minor],.key[data-k=minor]{fill:#1f77b4}"
  ".pause[data-kind=major_slice],.key[data-k=major_slice]{fill:#2ca02c}"
  ".pause[data-kind=major_finish],.key[data-k=major_finish]{fill:#ff7f0e}"
  ".pause[data-kind=compaction],.key[data-k=compaction]{fill:#d62728}.loss{fill:#f4c7c7;opacity:.6}"
  ".bucket{fill:#4a7fb5}.pct{stroke:#d62728;stroke-width:1.5}.line{fill:none;stroke:#1f77b4;"
  "stroke-width:1.5}.cause-bar{fill:#4a7fb5}.hist{display:flex;gap:1em;align-items:flex-start;"
  "flex-wrap:wrap}table.pcts{border-collapse:collapse;font-variant-numeric:tabular-nums}"
  "table.pcts td,table.pcts th{padding:.1em .6em;text-align:right;border-bottom:1px solid #eee}"
  "table.functions{border-collapse:collapse;font-variant-numeric:tabular-nums}"
  "table.functions td,table.functions th{padding:.1em .6em;text-align:right;"
  "border-bottom:1px solid #eee}table.functions td:first-child{text-align:left}"
  "svg.flame text{font-size:11px}svg.swatch{display:inline;vertical-align:middle;margin:0 .3em}"
  ".legend span{margin-right:1em}.note{color:#666;font-size:.9em}";

/* ---- the facts -------------------------------------------------------------- */

static void fact(FILE *f, const char *title, const char *key, const char *value)
{
  fputs("<dt>", f);
  html_text(f, title);
  fprintf(f, "</dt><dd data-key=\"%s\">", key);
  html_text(f, value);
  fputs("</dd>\n", f);
}

static const char *program_of(const struct html_in *in, const struct rep_figures *x)
{
  if (x->ext && x->info.program[0] != '\0') return x->info.program;
  if (in->m->command != NULL && in->m->command[0] != NULL) return in->m->command[0];
  return "unknown"; /* a stock ring names no program */
}

/* "X from ... (UTC start)" into buf. */
static const char *window_text(const struct rep_figures *x, const struct rep_meta *m, char *buf,
                               size_t n)
{
  char d[32], when[64] = "";
  if (x->ext && x->start_ns != 0) {
    time_t secs = (time_t)(((int64_t)x->start_ns + x->info.realtime_offset_ns) / 1000000000);
    struct tm tm;
    if (gmtime_r(&secs, &tm) != NULL) strftime(when, sizeof when, ", from %Y-%m-%d %H:%M:%S UTC", &tm);
  }
  snprintf(buf, n, "%s (%s%s)", cm_fmt_ns(d, sizeof d, x->wall_ns),
           m->mode == REP_PID ? "a window from the attach"
           : x->ext           ? "the process's life"
                              : "from the first event read to the last",
           when);
  return buf;
}

static void facts(FILE *f, const struct html_in *in, const struct rep_figures *x)
{
  char b[160];
  fputs("<dl id=\"ocgc-facts\">\n", f);
  fact(f, "program", "program", program_of(in, x));
  if (x->ext || in->m->pid > 0)
    snprintf(b, sizeof b, "%" PRIu64, x->ext ? x->info.pid : (uint64_t)in->m->pid);
  else
    snprintf(b, sizeof b, "unknown"); /* a stock ring read from a file */
  fact(f, "pid", "pid", b);
  if (x->ext) snprintf(b, sizeof b, "OCaml %s (ocgc %s)", x->info.ocaml_version, x->info.ocgc_version);
  else snprintf(b, sizeof b, "stock OCaml 5%s%s", x->ids.ocaml[0] ? " " : "", x->ids.ocaml);
  fact(f, "OCaml", "ocaml", b);
  fact(f, "window", "window_ns", window_text(x, in->m, b, sizeof b));
  snprintf(b, sizeof b, "%" PRIu64, x->c.events_seen);
  fact(f, "events seen", "events", b);
  snprintf(b, sizeof b, "%" PRIu64 " (%s)", x->c.events_lost, x->c.lost_exact ? "exact" : "estimated");
  fact(f, "events lost", "lost", b);
  if (in->m->path != NULL) fact(f, "file", "path", in->m->path);
  fputs("</dl>\n", f);
}

static void command_line(FILE *f, const struct rep_meta *m)
{
  char *const *a;
  if (m->command == NULL) return;
  fputs("<p class=\"note\">command: <code>", f);
  for (a = m->command; *a != NULL; a++) {
    if (a != m->command) fputc(' ', f);
    html_text(f, *a);
  }
  fputs("</code></p>\n", f);
}

/* A recording's section: the text report's as it reads there.  Its
 * target strings went through tool_esc() (printable ASCII, no newline),
 * the rest is ours: the markup's characters and anything outside
 * printable ASCII (none) are all that is escaped, lines kept. */
static int recording(FILE *f, const struct rep_meta *m)
{
  char *buf = NULL;
  const char *p;
  size_t n = 0;
  FILE *mf;
  if (m->flight == NULL || !m->flight->have) return 0;
  if ((mf = open_memstream(&buf, &n)) == NULL) return -errno;
  rep_flight_text(mf, m);
  if (fclose(mf) != 0) { free(buf); return -ENOMEM; }
  fputs("<h2>Recording</h2>\n<pre id=\"ocgc-recording\">", f);
  for (p = buf + strspn(buf, "\n"); *p != '\0'; p++) {
    if (html_entity(f, *p)) continue;
    if (*p == '\n' || (*p >= 0x20 && *p < 0x7f)) fputc(*p, f);
    else fprintf(f, "\\x%02x", (unsigned char)*p);
  }
  fputs("</pre>\n", f);
  free(buf);
  return 0;
}

/* rep_print_json()'s bytes as the data block: 0 or -errno. */
static int json_block(FILE *f, const struct html_in *in, const struct rep_figures *x)
{
  char *buf = NULL;
  size_t n = 0;
  FILE *mf = open_memstream(&buf, &n);
  if (mf == NULL) return -errno;
  rep_print_json(mf, in->m, x, in->snap);
  if (fclose(mf) != 0) { free(buf); return -ENOMEM; }
  fputs("<script type=\"application/json\" id=\"ocgc-report\">", f);
  html_json_data(f, buf, n);
  fputs("</script>\n", f);
  free(buf);
  return 0;
}

static void head(FILE *f, const struct html_in *in, const struct rep_figures *x)
{
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"" CSP "\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"generator\" content=\"ocgc ", f);
  html_text(f, ocgc_version());
  fputs("\">\n<title>GC report: ", f);
  html_text(f, in->m->path != NULL && !x->ext ? in->m->path : program_of(in, x));
  fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>GC report: ", style);
  html_text(f, in->m->path != NULL && !x->ext ? in->m->path : program_of(in, x));
  fputs("</h1>\n", f);
}

int html_write(FILE *f, const struct html_in *in)
{
  struct rep_figures x;
  struct html_ctx c;
  int err;
  rep_figures_get(&x, in->m, in->src, in->base, in->snap);
  memset(&c, 0, sizeof c);
  c.f = f;
  c.x = &x;
  c.snap = in->snap;
  c.tl = in->tl;
  c.prof = in->prof;
  c.syms = in->syms;
  c.cpu = in->m->cpu;
  c.t0 = x.start_ns;
  c.span = x.wall_ns;
  head(f, in, &x);
  facts(f, in, &x);
  command_line(f, in->m);
  err = recording(f, in->m);
  html_timeline(&c);
  html_hists(&c);
  html_series(&c);
  html_causes(&c);
  html_profile(&c);
  html_cpu(&c);
  if (err == 0) err = json_block(f, in, &x);
  fputs("</body>\n</html>\n", f);
  if (err == 0 && (fflush(f) != 0 || ferror(f))) err = errno ? -errno : -EIO;
  return err;
}

/* ---- the file --------------------------------------------------------------- */

/* OUT names a file that is not a regular one (/dev/full, a terminal, a
 * FIFO the caller made): written in place, opened without blocking (a
 * FIFO with no reader is an error, not a hang), never as a controlling
 * terminal, never through a link. */
static int open_special(struct html_file *hf, const char *path)
{
  int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC), flags;
  if (fd < 0) return -errno;
  flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
      (hf->f = fdopen(fd, "w")) == NULL) {
    int e = errno;
    close(fd);
    return -e;
  }
  return 0;
}

int html_file_open(struct html_file *hf, const char *path)
{
  struct stat lst, st;
  int fd, err;
  memset(hf, 0, sizeof *hf);
  hf->path = path;
  if (lstat(path, &lst) == 0) {
    /* A link to a regular file is replaced (rename), like a file; one to
     * anything else is never written through: in a folder others write,
     * it is how someone else would have us write into a terminal or make
     * us wait on a FIFO. */
    if (S_ISLNK(lst.st_mode) && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
      return -ELOOP;
    if (!S_ISLNK(lst.st_mode) && !S_ISREG(lst.st_mode)) return open_special(hf, path);
  }
  if ((err = cm_afile_open(&hf->file, path)) != 0) return err;
  hf->replacing = 1;
  /* The FILE closes its own descriptor; the file's is synced and closed
   * by its commit. */
  if ((fd = fcntl(hf->file.fd, F_DUPFD_CLOEXEC, 0)) < 0 || (hf->f = fdopen(fd, "w")) == NULL) {
    err = -errno;
    if (fd >= 0) close(fd);
    html_file_abort(hf);
    return err;
  }
  return 0;
}

int html_file_commit(struct html_file *hf)
{
  int err = 0;
  if (hf->f == NULL) return -EBADF;
  if (fflush(hf->f) != 0 || ferror(hf->f)) err = errno ? -errno : -EIO;
  if (fclose(hf->f) != 0 && err == 0) err = errno ? -errno : -EIO;
  hf->f = NULL;
  if (err == 0 && hf->replacing) err = cm_afile_commit(&hf->file, NULL);
  html_file_abort(hf);
  return err;
}

void html_file_abort(struct html_file *hf)
{
  if (hf->f != NULL) fclose(hf->f);
  hf->f = NULL;
  if (hf->replacing) cm_afile_abort(&hf->file);
  hf->replacing = 0;
}

/* ---- for the subcommands ------------------------------------------------------ */

int html_begin(struct html_file *hf, const char *path)
{
  int err = html_file_open(hf, path);
  if (err == 0) return 0;
  if (err == -ELOOP)
    tool_say("cannot write the HTML report %s: it is a link to something that is not a "
             "regular file, which is never written through (name that file itself)", path);
  else
    tool_say("cannot write the HTML report %s: %s", path, strerror(-err));
  return err == -EACCES || err == -EPERM || err == -EROFS ? TOOL_EXIT_DENIED : TOOL_EXIT_ERROR;
}

int html_finish(struct html_file *hf, const struct html_in *in)
{
  int err = html_write(hf->f, in);
  if (err != 0) {
    html_file_abort(hf);
  } else {
    err = html_file_commit(hf);
  }
  if (err == 0) return 0;
  tool_say("writing the HTML report %s: %s (not written)", hf->path, strerror(-err));
  return TOOL_EXIT_ERROR;
}

void html_sample(struct ocgc_timeline *tl, int pid)
{
  struct ocgc_process_figures ps = OCGC_OPTS_INIT(struct ocgc_process_figures);
  if (tl != NULL && ocgc_process_figures(pid, &ps) == 0)
    ocgc_timeline_proc_sample(tl, cm_mono_ns(), &ps);
}
