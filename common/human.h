/* human.h - durations and sizes for people (common layer, private): one
 * way for every command (3 significant digits; binary units, KiB and MiB,
 * as the kernel and ocgc report say them). */
#ifndef OCGC_COMMON_HUMAN_H
#define OCGC_COMMON_HUMAN_H

#include <stddef.h>
#include <stdint.h>

/* A MiB (2^20 bytes): every rate and size a command shows in MiB. */
#define CM_MIB 1048576.0

/* A duration in 3 significant digits and the unit that fits: "850ns",
 * "12.3us", "1.25ms", "2.50s".  Returns buf. */
const char *cm_fmt_ns(char *buf, size_t n, uint64_t ns);
/* A size in 3 significant digits: "512 B", "1.50 KiB", "12.3 MiB". */
const char *cm_fmt_bytes(char *buf, size_t n, uint64_t bytes);
/* A long time as a clock says it: "1h02m03s", "4m05s", "12.3s". */
const char *cm_fmt_uptime(char *buf, size_t n, uint64_t ns);

#endif /* OCGC_COMMON_HUMAN_H */
