/* ocgc_proc.h - what names one process across pid reuse and reboots, as
 * the producer writes it into its file and judges others' files by it
 * (private to runtime/ocgc_*.c). */
#ifndef CAML_OCGC_PROC_H
#define CAML_OCGC_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Field 22 of /proc/PID/stat (0 if gone), and the boot id without its
 * newline: with the pid, they name one process. */
uint64_t caml_ocgc_start_time(pid_t pid);
void caml_ocgc_boot_id(char *out, size_t n);

#endif /* CAML_OCGC_PROC_H */
