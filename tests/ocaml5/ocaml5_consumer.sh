#!/bin/sh
# ocaml5_consumer.sh - OCaml 5's own Runtime_events library reads a ring of
# our 4.13 runtime, on each OCaml 5 release ocaml5_lib.sh finds (5.3 and
# 5.4 when both roots are made: 5.4 appended phases to 5.3's numbering, so
# its library reads 5.3's ids).  rt_consumer (tests/ocaml5/, built
# with that stock OCaml by ocaml5_lib.sh) reads the preserved ring of
# workload written with OCGC_IDS=5.3 and finds: the program's minor
# collections (MINOR spans) and major collections (ocgc.major_cycle.end
# user events) equal to its Gc.quick_stat; every phase, counter and user
# event count, and every phase's mean and longest span, equal to `ocgc
# dump`'s; ocgc.* user events by the names the runtime declares
# (include/ocgc/wire.h); nothing lost.  With OCGC_IDS=5.2 (the default) the
# same consumer reads other phases: its phase table differs from the dump,
# the major slices it counts are not the program's, its "minor" spans are
# 5.2's minor_local_roots (as many, far shorter).  Skipped (77) without an
# OCaml 5 compiler.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
need_runtime
. "$OCGC_SRCDIR/tests/lib/ocaml5_lib.sh"

compile_native workload ocgc_test.ml workload.ml

# ckey TAG KEY [DEFAULT]: a key of what rt_consumer printed for TAG
ckey() { getkey "$WORK/$1.cons" "$2" "${3:-}"; }

# produce TAG: run workload with OCGC_IDS=TAG and dump its ring
produce() {
  run_ok "$1" env OCGC_IDS=$1 OCAMLRUNPARAM=e=20 ./workload 2
  ring_of "$1"
  dump_ring "$RING" "$1"
  check_no_loss "$1"
  check_totals_agree "$1"
}

# consume TAG: read the ring of TAG with rt_consumer into $WORK/TAG.cons
consume() {
  if ! "$WORK/rt_consumer" "$EVDIR" "`outkey "$1" pid`" >"$WORK/$1.cons" 2>"$WORK/$1.cons.err"; then
    cat "$WORK/$1.cons.err"
    hard_error "rt_consumer failed on the ring of $1"
  fi
  check_eq "$1: rt_consumer's stderr lines" 0 "`stderr_lines $1.cons`"
  check_eq "$1: rt_consumer runs on OCaml" "`ocaml5_version`" "`ckey $1 ocaml`"
  check_eq "$1: events lost (Runtime_events)" 0 "`ckey $1 events.lost`"
}

# table_diff TAG: the phase.*, counter.* and user.* count and sum lines of rt_consumer
# and of `ocgc dump` that differ, as "key=consumer/dump ...", or "none".
# (ocgc dump prints a phase's begins and ends even when zero; its counters'
# count and sum; user events by name.  OCaml 5.3 names phase COMPACT
# "compaction", libocgc "compact".)
TABLE_KEYS='^(phase\.[a-z_]+\.(begin|end|spans|mean_ns|max_ns)|counter\.[a-z_]+\.(count|sum)|user\..*\.(count|sum)) '
table_diff() {
  _cons=`grep -E "$TABLE_KEYS" "$WORK/$1.cons" | sed 's/^phase\.compaction/phase.compact/'`
  _dump=`grep -E "$TABLE_KEYS" "$WORK/$1.dump"`
  _d=`printf '%s\n--\n%s\n' "$_cons" "$_dump" | awk '
    $1 == "--" { dump = 1; next }
    !dump { c[$1] = $2; next }
    { d[$1] = $2 }
    END { for (k in c) if (c[k] != d[k] + 0) printf "%s=%s/%s\n", k, c[k], d[k] + 0
          for (k in d) if (!(k in c) && d[k] != 0) printf "%s=0/%s\n", k, d[k] }' |
    sort | tr '\n' ' ' | sed 's/ $//'`
  printf '%s\n' "${_d:-none}"
}

# The user event names the runtime declares: the fixed ones and the causes.
DECLARED=`sed -n 's/^#define OCGC_UEV_[A-Z_]* *"\(ocgc\.[a-z_.]*\)".*/\1/p' \
  "$OCGC_SRCDIR/include/ocgc/wire.h" | tr '\n' ' '`

# check_user_names TAG: rt_consumer saw ocgc.* user events, each under a
# name the runtime declares, and the cycle ends among them
check_user_names() {
  _seen=`sed -n 's/^user\.\(.*\)\.count [0-9]*$/\1/p' "$WORK/$1.cons" | tr '\n' ' '`
  say "  user events seen by Runtime_events: $_seen"
  _bad=
  for _n in $_seen; do
    case " $DECLARED " in *" $_n "*) continue ;; esac
    case $_n in ocgc.cause.[a-z]*) continue ;; esac
    _bad="$_bad $_n"
  done
  check_eq "$1: user event names not declared by the runtime" none "${_bad:-none}"
  check_ge "$1: ocgc.major_cycle.end events seen by name" 1 "`ckey $1 user.ocgc.major_cycle.end.count 0`"
  check_ge "$1: ocgc.major_cycle.start events seen by name" 1 "`ckey $1 user.ocgc.major_cycle.start.count 0`"
}

produce 5.3
produce 5.2
for o5 in $OCAML5_ALL; do
ocaml5_use "$o5"
ocaml5_compile "$OCGC_SRCDIR/tests/ocaml5/rt_consumer.ml" "$WORK/rt_consumer" runtime_events
say "== OCGC_IDS=5.3: OCaml `ocaml5_version`'s Runtime_events reads it right"
consume 5.3
minor=`outkey 5.3 gc.minor_collections`
major=`outkey 5.3 gc.major_collections`
say "  quick_stat: minor $minor major $major; Runtime_events:" \
  "minor `ckey 5.3 minor_collections` major `ckey 5.3 major_collections`"
check_gt "5.3: minor collections" 0 "$minor"
check_gt "5.3: major collections" 0 "$major"
check_eq "5.3: minor collections (Runtime_events MINOR spans)" "$minor" "`ckey 5.3 minor_collections`"
check_eq "5.3: minor spans paired" "$minor" "`ckey 5.3 phase.minor.spans`"
check_eq "5.3: major collections (ocgc.major_cycle.end events)" "$major" "`ckey 5.3 major_collections`"
check_eq "5.3: the last ocgc.major_cycle.end value" "$major" "`ckey 5.3 user.ocgc.major_cycle.end.last`"
check_eq "5.3: major slices (Runtime_events)" "`dkey 5.3 phase.major_slice.begin`" \
  "`ckey 5.3 phase.major_slice.begin`"
_a=`ckey 5.3 counter.minor_allocated.sum 0`
check_eq "5.3: minor_allocated/8 (Runtime_events) = minor_words" "`outkey 5.3 gc.minor_words`" "$((_a / 8))"
check_eq "5.3: phase, counter and user tables, Runtime_events against ocgc dump" none "`table_diff 5.3`"
check_user_names 5.3

say "== OCGC_IDS=5.2 (the default): OCaml `ocaml5_version`'s Runtime_events reads other phases"
consume 5.2
check_user_names 5.2
check_eq "5.2: major collections (user events do not depend on the ids)" \
  "`outkey 5.2 gc.major_collections`" "`ckey 5.2 major_collections`"
_diff=`table_diff 5.2`
say "  `echo "$_diff" | wc -w | tr -d ' '` keys differ; the begin counts (consumer/dump):" \
  "`echo "$_diff" | tr ' ' '\n' | grep '\.begin=' | tr '\n' ' '`"
check_false "5.2: the phase tables differ" test "$_diff" = none
check_false "5.2: major slices (Runtime_events) differ from the program's" \
  test "`ckey 5.2 phase.major_slice.begin 0`" = "`dkey 5.2 phase.major_slice.begin`"
check_false "5.2: 5.3's major_mark count is not the program's" \
  test "`ckey 5.2 phase.major_mark.begin 0`" = "`dkey 5.2 phase.major_mark.begin 0`"
# 5.3's MINOR id is 5.2's MINOR_LOCAL_ROOTS, a sub-phase of every minor
# collection: as many spans, each a small part of a collection.
check_eq "5.2: 5.3's minor spans are 5.2's minor_local_roots" \
  "`dkey 5.2 phase.minor_local_roots.spans`" "`ckey 5.2 phase.minor.spans`"
check_false "5.2: their mean duration is not the minor collections'" \
  test "`ckey 5.2 phase.minor.mean_ns`" = "`dkey 5.2 phase.minor.mean_ns`"
done
say "read by the Runtime_events of OCaml: `for o5 in $OCAML5_ALL; do ocaml5_use "$o5"; ocaml5_version; done | tr '\n' ' '`"
finish
