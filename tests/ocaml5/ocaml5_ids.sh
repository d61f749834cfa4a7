#!/bin/sh
# ocaml5_ids.sh - each OCaml 5 release's event ids in libocgc, checked
# against the release itself, id by id, for every OCaml 5 that
# ocaml5_lib.sh finds (the trixie root's 5.3, the forky root's 5.4, or one
# named by OCGC_OCAML5_BIN, which may be a 5.2):
# - its caml/runtime_events.h: the ev_runtime_phase, ev_runtime_counter and
#   ev_lifecycle enums (names lower-cased without EV_ and EV_C_, numbered
#   from 0 in order, as the runtime writes them) equal the table ids_table
#   prints for that release, with no id more or less;
# - its Runtime_events library: the names runtime_phase_name,
#   runtime_counter_name and lifecycle_name give each constructor of the
#   library's types (listed from its runtime_events.mli, numbered in order,
#   as the library decodes an id) equal the table's at that id, but
#   "compaction*", which the library says for our "compact*".  The library
#   may know fewer phases than the header (5.4.1's has no
#   minor_ephe_clean): said, not failed.
# A release for which libocgc has no table (newer than 5.4) fails: its
# table must be added.  Skipped (77) without any OCaml 5; a release missing
# is said in one line.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
. "$OCGC_SRCDIR/tests/lib/ocaml5_lib.sh"

IDS_TABLE=$OCGC_BUILDDIR/tests/ocaml5/ids_table
test -x "$IDS_TABLE" || hard_error "no $IDS_TABLE (make check builds it)"

# enum_of HEADER TYPE KIND PREFIX: the "KIND ID NAME" lines of the C enum
# typedef'd as TYPE, or "bad" if one of its entries sets its own value
enum_of() {
  awk -v t="$2" -v k="$3" -v p="$4" '
    /^typedef enum *[{]/ { inside = 1; n = 0; bad = 0; next }
    inside && /^[}]/ {
      inside = 0
      if ($0 ~ ("^[}] *" t " *;")) {
        if (bad) print "bad"
        for (i = 0; i < n; i++) print k, i, names[i]
      }
      next
    }
    inside {
      sub(/[/][*].*[*][/]/, ""); sub(/[/][/].*/, "")
      if ($0 ~ /=/) bad = 1
      if (match($0, /^[ \t]*EV_[A-Z0-9_]+/)) {
        nm = substr($0, RSTART, RLENGTH); sub(/^[ \t]*/, "", nm)
        sub("^" p, "", nm); names[n++] = tolower(nm)
      }
    }' "$1"
}

# constructors_of MLI TYPE: the constructors of OCaml variant TYPE, in order
# (one a line, as runtime_events.mli has them; its comments skipped)
constructors_of() {
  awk -v t="$2" '
    # depth of (* *) comments at the start of each line
    { line = $0; d0 = depth
      o = gsub(/[(][*]/, "", line); c = gsub(/[*][)]/, "", line); depth += o - c }
    $0 ~ ("^type " t " *=") { inside = 1; next }
    inside && d0 == 0 && /^(type|val|module|external) / { exit }
    inside && d0 == 0 && match($0, /^[|[:space:]]*EV_[A-Z0-9_]+/) {
      nm = substr($0, RSTART, RLENGTH); sub(/^[|[:space:]]*/, "", nm); print nm
    }' "$1"
}

RAN=
for o5 in $OCAML5_ALL; do
  ocaml5_use "$o5"
  V=`ocaml5_version`
  IDS=`ocaml5_ids`
  T=$WORK/$IDS
  mkdir -p "$T"
  say "== OCaml $V ($OCAML5_MODE): libocgc's $IDS table against the release"
  if ! "$IDS_TABLE" "$IDS" >"$T/table" 2>"$T/table.err"; then
    cat "$T/table.err"
    check_eq "OCaml $V: libocgc has a table for $IDS (a new release needs one)" yes no
    continue
  fi
  RAN="$RAN $V"
  H=`ocaml5_header` || { check_eq "OCaml $V: caml/runtime_events.h found" yes no; continue; }
  {
    enum_of "$H" ev_runtime_phase phase EV_
    enum_of "$H" ev_runtime_counter counter EV_C_
    enum_of "$H" ev_lifecycle lifecycle EV_
  } >"$T/header"
  check_false "OCaml $V: the header's enums number themselves in order" grep -q '^bad' "$T/header"
  for kind in phase counter lifecycle; do
    check_gt "OCaml $V: the header has $kind ids" 0 "`grep -c "^$kind " "$T/header"`"
  done
  _d=`diff "$T/header" "$T/table" | grep '^[<>]' | head -n 8 | tr '\n' ';'`
  say "  header: `grep -c '^phase ' "$T/header"` phases, `grep -c '^counter ' "$T/header"` counters," \
    "`grep -c '^lifecycle ' "$T/header"` lifecycle events"
  check_eq "OCaml $V: header ids (<) against libocgc's $IDS table (>)" "" "$_d"

  # The names Runtime_events gives each constructor, by a program of
  # this release, generated from its runtime_events.mli.
  MLI=`dirname "$H"`/../runtime_events/runtime_events.mli
  if ! test -f "$MLI"; then
    say "SKIP part: OCaml $V has no runtime_events.mli beside its header: Runtime_events' names not checked"
    continue
  fi
  {
    echo "let p = Runtime_events.runtime_phase_name and c = Runtime_events.runtime_counter_name"
    echo "and l = Runtime_events.lifecycle_name"
    for pair in "runtime_phase phase p" "runtime_counter counter c" "lifecycle lifecycle l"; do
      set -- $pair
      echo "let () = List.iteri (fun i n -> Printf.printf \"$2 %d %s\\n\" i ($3 n)) ["
      constructors_of "$MLI" "$1" | sed 's/^/  Runtime_events./; s/$/;/'
      echo "]"
    done
  } >"$T/rt_names.ml"
  ocaml5_compile "$T/rt_names.ml" "$T/rt_names" runtime_events
  "$T/rt_names" >"$T/rt" 2>"$T/rt.err" || { cat "$T/rt.err"; hard_error "rt_names of OCaml $V failed"; }
  sed 's/ compaction/ compact/' "$T/rt" >"$T/rt.ours"
  for kind in phase counter lifecycle; do
    check_gt "OCaml $V: Runtime_events names $kind ids" 0 "`grep -c "^$kind " "$T/rt"`"
  done
  # Each id the library names: the table's name; the ids it has not.
  _d=`grep -v -x -F -f "$T/table" "$T/rt.ours" | head -n 8 | tr '\n' ';'`
  check_eq "OCaml $V: Runtime_events' names the table lacks" "" "$_d"
  _miss=`grep -v -x -F -f "$T/rt.ours" "$T/table" | tr '\n' ';'`
  test -z "$_miss" || say "  ids Runtime_events $V has no constructor for: $_miss"
done
say "tables checked against:${RAN:- none}"
finish
