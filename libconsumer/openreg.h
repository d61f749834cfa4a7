/* openreg.h - open a file that a target names, and nothing else (private).
 *
 * A target chooses paths we may open: the paths in its /proc/PID/maps,
 * the entries of a ring folder it writes.  Opening is itself an action on
 * what is opened (a FIFO blocks or wakes its writer, a terminal may become
 * a controlling one, a tape rewinds, a device driver runs), so a file a
 * target names is reached with O_PATH, which opens nothing, checked to be
 * the regular file expected, and only then opened for reading, through
 * /proc/self/fd: the very inode just checked. */
#ifndef OCGC_OPENREG_H
#define OCGC_OPENREG_H

#include <sys/types.h>

/* How [path] may be resolved. */
enum ocgc_openreg_how {
  /* No symbolic link anywhere in the path, and no magic link (openat2's
   * RESOLVE_NO_SYMLINKS; where the kernel has no openat2, the last
   * component only, O_NOFOLLOW): a path the target wrote. */
  OCGC_OPENREG_NO_LINKS,
  /* The last component may be a /proc magic link (map_files, fd), which
   * leads to the inode itself, not to a path. */
  OCGC_OPENREG_MAGIC_LAST,
};

/* Open [path] (relative to [dirfd]) for reading if it is a regular file
 * and, when [dev] or [ino] is nonzero, that very one.  Returns the
 * descriptor (O_RDONLY|O_CLOEXEC|O_NOCTTY|O_NONBLOCK), -ELOOP where a link
 * was in the way, OCGC_E_NORING for another file, or -errno. */
int ocgc_open_regular(int dirfd, const char *path, enum ocgc_openreg_how how, dev_t dev, ino_t ino);

#endif /* OCGC_OPENREG_H */
