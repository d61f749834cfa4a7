/* version.c - the library's version string (from configure). */

#include "config.h"
#include "ocgc/consumer.h"

const char *ocgc_version(void)
{
  return PACKAGE_VERSION;
}
