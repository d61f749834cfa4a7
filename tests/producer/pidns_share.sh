#!/bin/sh
# pidns_share.sh - two producers share a ring folder, one in a new pid
# namespace (a container with the folder bind-mounted: the sidecar case),
# and neither loses its name.  The start-up sweep used
# to judge every <P>.events by kill(P, 0) in its own namespace: a producer
# started in a container removed the host's live names.  And the
# container's 1.events led, on the host, to init's descriptor.  Now names
# say whose pid they hold (.ocgc-ring.<ns>.<pid>, to which <pid>.events is
# an alias), a sweep judges only its own namespace's, and the link leads to
# a mapping: from the host the container's name opens nothing; from inside
# the container it opens the ring.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
cmd_init
compile_native hello ocgc_test.ml hello.ml
for t in unshare nsenter; do
  command -v $t >/dev/null 2>&1 || { echo "SKIP: $t (util-linux) is missing"; exit 77; }
done
if ! unshare --pid --fork --kill-child --mount-proc true >"$WORK/unshare.err" 2>&1; then
  echo "SKIP: unshare cannot make a pid namespace here: `head -n 1 "$WORK/unshare.err"`"
  exit 77
fi

# names WHO: both names are there, each an alias of an identity link
names() {
  check_true "$1: the host's name $hpid.events" test -L "$EVDIR/$hpid.events"
  check_true "$1: the container's name 1.events" test -L "$EVDIR/1.events"
  check_eq "$1: identity links" 2 "`ls -A "$EVDIR" | grep -c '^\.ocgc-ring\.'`"
}

say "== the host's producer"
target_start host 0.1
hpid=$BGPID

say "== a producer as pid 1 of a new pid namespace, in the same folder"
start_bg ns unshare --pid --fork --kill-child --mount-proc ./cmd_target 0.1 \
  "$WORK/ns.go" "$WORK/ns.stop"
nsbg=$BGPID
wait_key ns before.heap_chunks "$nsbg"
check_eq "ns: its pid in there" 1 "`outkey ns pid`"
# Its pid here: unshare's child (/proc/PID/task/PID/children needs a kernel
# built with it; the stat lines' parent pids do not).
inner=`cat /proc/$nsbg/task/$nsbg/children 2>/dev/null | tr -d ' '`
if ! is_uint "$inner"; then
  inner=`awk -v p="$nsbg" '{ sub(/.*\)/, ""); split($0, f, " ")
    if (f[2] == p) { n = FILENAME; gsub(/[^0-9]/, "", n); print n; exit } }' /proc/[0-9]*/stat 2>/dev/null`
fi
is_uint "$inner" || hard_error "the namespace's pid 1 is not found from here"
names "after its start (its sweep)"
check_false "host: the container's name opens nothing here (not init's file)" \
  sh -c "head -c 1 '$EVDIR/1.events' >/dev/null 2>&1"
check_true "ns: from inside, the name opens its ring" \
  nsenter -t "$inner" -p -m sh -c "cat '$EVDIR/1.events' >'$WORK/ns.copy'"
dump_ring "$WORK/ns.copy" nscopy
check_dkey nscopy producer.pid 1

say "== more starts: each sweeps only its own namespace's names"
run_ok hosthello ./hello
names "after a start on the host"
run_ok nshello nsenter -t "$inner" -p -m "$WORK/hello"
names "after a start in the container's namespace"
# Its pid is 1 too: the name 1.events is the container's, so it publishes
# only its identity link (and, with nothing to keep under a name, keeps no
# ring at exit).
run_ok otherhello env -u OCAML_RUNTIME_EVENTS_PRESERVE \
  unshare --pid --fork --kill-child --mount-proc ./hello
names "after a start of a pid 1 in a third namespace"

say "== both exit: each removes its own names"
target_stop host "$hpid"
target_stop ns "$nsbg"
check_eq "host: exit status" 0 "`rc_of host`"
check_eq "ns: exit status" 0 "`rc_of ns`"
check_eq "identity links left" 0 "`ls -A "$EVDIR" | grep -c '^\.ocgc-ring\.'`"
check_true "host: its kept ring" test -f "$EVDIR/$hpid.events"
check_true "ns: its kept ring" test -f "$EVDIR/1.events"
finish
