#!/bin/sh
# profile_gc_cpu.sh - `ocgc profile PID --duration D --rate R --gc-cpu`:
# the collector's CPU over an allocation window, measured by CPU samples
# (by phase) and charged to the stacks that cause it (ocgc/gccharge.h:
# minor collections by bytes allocated in the minor heap, the major
# collector by bytes entering the major heap).  gc_charge.ml's [young]
# allocates lists that die at once, [old] as many bytes of arrays that
# survive (promoted):
# - JSON: the window's gc_cpu (minor and major CPU both above 0), each
#   stack's gc_cpu_ns, their sum the charged figure, charged + not
#   charged = minor + major;
# - [young] promotes (almost) nothing, [old] most of what it allocates;
#   so [old] is charged more CPU per byte allocated than [young] (its
#   share of the major collector's besides the minor one);
# - pprof: `go tool pprof -sample_index=gc_cpu -top` names both sites;
# - refused before anything is read: --gc-cpu without a window, with the
#   folded form, --frequency without --gc-cpu.
# Skips (77) only where perf_event_open is refused, saying why, or where
# go is missing.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
attach_init
. "$OCGC_SRCDIR/tests/lib/pprof_lib.sh"
pprof_init
command -v python3 >/dev/null 2>&1 || hard_error "python3 is needed (a Debian package of the project's list)"

say "== refused before anything is read"
for bad in "--gc-cpu" "--gc-cpu --duration 1s --format folded" "--duration 1s --frequency 50"; do
  "$OCGC" profile 1 $bad >"$WORK/bad.out" 2>"$WORK/bad.err"
  check_eq "ocgc profile 1 $bad: a usage error" 2 "$?"
  say "  `head -n 1 "$WORK/bad.err"`"
done

compile_native gcc ocgc_test.ml gc_charge.ml
start_bg gcc ./gcc "$WORK/gcc.stop"
pid=$BGPID
wait_key gcc pid "$pid"

"$OCGC" profile "$pid" --duration 4s --rate 4k --gc-cpu --frequency 400 --format json \
  -o "$WORK/p.json" 2>"$WORK/p.err"
rc=$?
cat "$WORK/p.err"
if test "$rc" = 8 || grep -q 'not supported' "$WORK/p.err"; then
  say "skipped: perf_event_open is refused here, or has no cpu-clock event: `cat "$WORK/p.err"`"
  : >"$WORK/gcc.stop"; stop_bg gcc "$pid"
  exit 77
fi
check_eq "ocgc profile --gc-cpu --format json: exit status" 0 "$rc"
python3 - "$WORK/p.json" >"$WORK/fig" 2>&1 <<'PY' || hard_error "the JSON: `cat "$WORK/fig"`"
import json, sys
p = json.load(open(sys.argv[1]))
g = p["gc_cpu"]
site = {"young": [0, 0, 0], "old": [0, 0, 0]}  # alloc_space, promoted_space, gc_cpu_ns
total = 0
for s in p["stacks"]:
    total += s["gc_cpu_ns"]
    for f in s["frames"]:
        fn = f.get("function") or ""
        if fn.startswith("Gc_charge."):
            k = fn.split(".", 1)[1]
            if k in site:
                site[k][0] += s["alloc_space"]; site[k][1] += s["promoted_space"]
                site[k][2] += s["gc_cpu_ns"]
            break
print("minor_ns", g["minor_ns"]); print("major_ns", g["major_ns"])
print("charged_ns", g["charged_ns"]); print("unattributed_ns", g["unattributed_ns"])
print("sum_stacks_ns", total)
for k, (a, pr, c) in site.items():
    print(k + "_alloc", a); print(k + "_promoted", pr); print(k + "_gc", c)
    print(k + "_gc_per_mib", int(c * 1048576 / a) if a else 0)
PY
fig() { awk -v k="$1" '$1 == k { print $2; exit }' "$WORK/fig"; }
cat "$WORK/fig" | tr '\n' ' '; echo
check_gt "gc_cpu: CPU in minor collections" 0 "`fig minor_ns`"
check_gt "gc_cpu: CPU in the major collector" 0 "`fig major_ns`"
check_eq "the stacks' gc_cpu_ns sum to the charged figure" "`fig charged_ns`" "`fig sum_stacks_ns`"
check_eq "charged + not charged = minor + major" \
  $((`fig minor_ns` + `fig major_ns`)) $((`fig charged_ns` + `fig unattributed_ns`))
check_gt "young: allocated" 0 "`fig young_alloc`"
check_gt "old: allocated" 0 "`fig old_alloc`"
check_true "young promotes under 5% of what it allocates (`fig young_promoted` of `fig young_alloc`)" \
  test $((`fig young_promoted` * 20)) -lt "`fig young_alloc`"
check_true "old promotes over half of what it allocates (`fig old_promoted` of `fig old_alloc`)" \
  test $((`fig old_promoted` * 2)) -gt "`fig old_alloc`"
check_true "old is charged more per byte allocated than young (`fig old_gc_per_mib` vs `fig young_gc_per_mib` ns/MiB)" \
  test "`fig old_gc_per_mib`" -gt "`fig young_gc_per_mib`"

"$OCGC" profile "$pid" --duration 2s --rate 4k --gc-cpu -o "$WORK/p.pb.gz" 2>"$WORK/pb.err"
check_eq "ocgc profile --gc-cpu (pprof): exit status" 0 "$?"
go tool pprof -top -sample_index=gc_cpu -nodefraction=0 -nodecount=100000 "$WORK/p.pb.gz" \
  >"$WORK/top" 2>"$WORK/top.err" || hard_error "go tool pprof: `cat "$WORK/top.err"`"
sed -n 1,12p "$WORK/top"
check_true "pprof -sample_index=gc_cpu names Gc_charge.young" grep -q 'Gc_charge\.young$' "$WORK/top"
check_true "pprof -sample_index=gc_cpu names Gc_charge.old" grep -q 'Gc_charge\.old$' "$WORK/top"
check_true "pprof: its unit is nanoseconds (a time)" grep -Eq '^Showing nodes .* of [0-9.]+(ns|us|ms|s) total' "$WORK/top"

: >"$WORK/gcc.stop"
stop_bg gcc "$pid"
finish
