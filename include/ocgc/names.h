/* ocgc/names.h - names of runtime ids in each numbering, and the library's
 * version. */
#ifndef OCGC_PUBLIC_NAMES_H
#define OCGC_PUBLIC_NAMES_H

#include <ocgc/source.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- names ------------------------------------------------------------------- */

/** Names of runtime ids in the given numbering ("minor", "major_slice",
 * ...), or NULL for an id the numbering does not have. */
OCGC_API const char *ocgc_phase_name(enum ocgc_ids ids, unsigned id);
/** The same for runtime counter ids ("minor_promoted", ...). */
OCGC_API const char *ocgc_counter_name(enum ocgc_ids ids, unsigned id);
/** The same for lifecycle ids ("ring_start", ...), one numbering for all. */
OCGC_API const char *ocgc_lifecycle_name(unsigned id);

/** The library's version, "MAJOR.MINOR.PATCH". */
OCGC_API const char *ocgc_version(void);

#ifdef __cplusplus
}
#endif

#endif /* OCGC_PUBLIC_NAMES_H */
