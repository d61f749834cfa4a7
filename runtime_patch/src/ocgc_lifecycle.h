/* ocgc_lifecycle.h - the ring's fork and exit handlers (ocgc_lifecycle.c;
 * private to runtime/ocgc_*.c). */
#ifndef CAML_OCGC_LIFECYCLE_H
#define CAML_OCGC_LIFECYCLE_H

/* Install the fork handlers (pthread_atfork) and the exit handler
 * (atexit), once per process image: at start, once its first file is
 * made. */
void caml_ocgc_lifecycle_install(void);

#endif /* CAML_OCGC_LIFECYCLE_H */
