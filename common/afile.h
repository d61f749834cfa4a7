/* afile.h - a file replaced whole (common layer, private): what `ocgc
 * trace -o`, `--html` and `serve --textfile` write.
 *
 * The one rule: the new text goes to a hidden file beside PATH
 * (".BASE.XXXXXX" in PATH's folder, so rename(2) cannot cross file systems,
 * and a collector that reads *.prom never reads it half-written), made
 * 0666 less the umask (an ordinary output, as any program's: the unit of
 * `ocgc serve` sets the umask its readers need), synced to disk, then
 * renamed over PATH: a reader, or a crash, finds the old file or the whole
 * new one, never a prefix.  A failure leaves PATH as it was and no
 * temporary file behind. */
#ifndef OCGC_COMMON_AFILE_H
#define OCGC_COMMON_AFILE_H

struct cm_afile {
  char *path;   /* the file to replace (a copy) */
  char *tmp;    /* the temporary file beside it */
  int fd;       /* open on tmp, write only; -1 once closed */
};

/* Begin replacing [path]: *f ready, f->fd open for writing.  0, or -errno
 * (nothing made). */
int cm_afile_open(struct cm_afile *f, const char *path);
/* Sync, close and rename over the path: 0, or -errno (the path untouched,
 * the temporary file removed).  *what (may be NULL) names the step that
 * failed: "write" (the sync or close), "rename a new file onto". */
int cm_afile_commit(struct cm_afile *f, const char **what);
/* Give up: the temporary file closed and removed.  Safe after commit. */
void cm_afile_abort(struct cm_afile *f);

#endif /* OCGC_COMMON_AFILE_H */
