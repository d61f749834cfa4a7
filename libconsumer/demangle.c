/* demangle.c - OCaml names of native-code symbols (ocgc_ocaml_demangle).
 *
 * What ocamlopt 4.x writes (asmcomp/compilenv.ml, x86_proc.ml): "caml",
 * the compilation unit's name (a capital first; Dune's and the standard
 * library's wrapped units carry their path inside it: "Stdlib__List"),
 * "__", the function's name and "_" and a stamp; a character that may not
 * be in a symbol is "$" and two hex digits.  OCaml 5.1 and later separate
 * with "." where 4.x wrote "__"; both are read.  So every "__" or "." is a
 * step of the path, the stamp is the last "_" and digits, and "fun" is an
 * anonymous function.
 *
 * Invariants: total over any NUL-terminated bytes, one pass, nothing
 * written past out[n - 1]; the output holds only the input's bytes and
 * bytes decoded from escapes that are printable ASCII (others are kept
 * as their escape). */

#include <string.h>

#include "ocgc/symbols.h"

static int hexval(char c)
{
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The length of [s] without a trailing "_" and digits (the stamp), when
 * something remains before it. */
static size_t without_stamp(const char *s, size_t len)
{
  size_t i = len;
  while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') i--;
  if (i < len && i >= 2 && s[i - 1] == '_') return i - 1;
  return len;
}

size_t ocgc_ocaml_demangle(const char *sym, char *out, size_t n)
{
  size_t len, i, o = 0;
  if (sym == NULL || out == NULL || n == 0) return 0;
  if (strncmp(sym, "caml", 4) != 0 || sym[4] < 'A' || sym[4] > 'Z') return 0;
  sym += 4;
  len = without_stamp(sym, strlen(sym));
  for (i = 0; i < len; i++) {
    char c = sym[i];
    if (c == '_' && i + 1 < len && sym[i + 1] == '_' && i + 2 < len) {
      c = '.';
      i++;
    } else if (c == '$' && i + 2 < len && hexval(sym[i + 1]) >= 0 && hexval(sym[i + 2]) >= 0) {
      int v = hexval(sym[i + 1]) * 16 + hexval(sym[i + 2]);
      if (v > 0x20 && v < 0x7f) {
        c = (char)v;
        i += 2;
      }
    }
    if (o + 1 >= n) return 0;
    out[o++] = c;
  }
  out[o] = '\0';
  return o;
}
