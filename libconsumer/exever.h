/* exever.h - the OCaml version inside a process's executable (private). */
#ifndef OCGC_EXEVER_H
#define OCGC_EXEVER_H

#include <stddef.h>
#include <stdint.h>

#include "ocgc/consumer.h"

/* Bounds of one read of an executable. */
#define OCGC_EXE_MAX_BYTES (UINT64_C(64) << 20)
#define OCGC_EXE_MAX_NS UINT64_C(500000000)

/* The OCaml version in [buf][0..n): the bytecode runtime's banner "The OCaml
 * runtime, version X.Y.Z", else the one OCaml string block that holds a
 * version "X.Y.Z..." (Sys.ocaml_version in a native program).  Writes it to
 * out[0..outn) and returns 0; -ENOENT if there is none, or two different
 * ones (nothing is guessed). */
int ocgc_exe_version_scan(const char *buf, size_t n, char *out, size_t outn);

/* Read the regular file [fd] (an executable) from its start, at most
 * OCGC_EXE_MAX_BYTES bytes and OCGC_EXE_MAX_NS ns, and find its OCaml
 * version as ocgc_exe_version_scan() does.  0, -ENOENT, -ETIME (out of
 * time), -EFBIG (nothing found in the bytes allowed), -EMEDIUMTYPE (a FUSE
 * file: its daemon could hold a read for ever), or -errno. */
int ocgc_exe_version_fd(int fd, char *out, size_t outn);

/* The OCaml version of the executable of process [pid], whose /proc start
 * time is [start]: only /proc/PID/exe is opened (the kernel's link to the
 * very file the process runs, never a path the process wrote), and the
 * version counts only if the process is still that one after the read.
 * 0, OCGC_E_STALE (it is not), or an error of ocgc_exe_version_fd(). */
int ocgc_exe_version_pid(int pid, uint64_t start, char *out, size_t outn);

/* The numbering a stock runtime of OCaml [version] writes: OCGC_IDS_52 up
 * to 5.2.x (and for what is no version), OCGC_IDS_53 for 5.3.x,
 * OCGC_IDS_54 for 5.4.x; OCGC_IDS_AUTO for a newer release, whose numbering
 * nothing here knows. */
enum ocgc_ids ocgc_ids_of_version(const char *version);

#endif /* OCGC_EXEVER_H */
