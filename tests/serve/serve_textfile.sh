#!/bin/sh
# serve_textfile.sh - `ocgc serve --textfile PATH --interval D`: the same
# exposition written for node_exporter's textfile collector.  Without
# --listen there is no HTTP server; the file is text that promtool accepts,
# with the program's figures equal to its Gc.quick_stat; it is replaced
# atomically (300 reads while it is rewritten every 10 ms: each one whole,
# and no temporary file left at exit); Debian's prometheus-node-exporter,
# with its default collectors, serves it with no textfile error and every
# family of the file (none clashes with its own process_*).  A folder that is not there (a file in its
# place, which even root cannot write under) and a full disk (a 64 KiB
# tmpfs, when this machine lets us mount one) are said once on stderr and
# counted, the old file kept, and the next write after the cause is gone
# succeeds and says so.  SIGTERM ends it with 0 and removes the file.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
cmd_init

target_start a 0.2
pid=$BGPID
target_go a
wait_key a gc.config.allocation_policy "$pid"

# wait_for WHAT CMD...: poll CMD until it succeeds (at most 30 s)
wait_for() {
  _what=$1; shift
  _n=0
  until "$@"; do
    _n=$((_n + 1)); test $_n -le 600 || hard_error "waited 30 s for $_what"
    sleep 0.05
  done
}

say "== usage"
ocgc_cmd u1 serve --interval 1s "$pid"
check_eq "--interval without --textfile: usage error" 2 "`rc_of u1`"
ocgc_cmd u2 serve --textfile "$WORK/x.prom" --interval 1ms "$pid"
check_eq "--interval under 10ms: usage error" 2 "`rc_of u2`"

say "== written, whole, for node_exporter"
TF=$WORK/tf
mkdir "$TF"
ocgc_bg tf serve --textfile "$TF/ocgc.prom" --interval 0.01 "$pid"
tf_pid=$OCGC_BGPID
wait_for "the text file" test -s "$TF/ocgc.prom"
cp "$TF/ocgc.prom" "$WORK/t1"
check_false "no HTTP server without --listen" grep -q 'listening on' "$WORK/tf.err"
check_true "it says where it writes" grep -q "writing $TF/ocgc.prom every 0.01s" "$WORK/tf.err"
if command -v promtool >/dev/null 2>&1; then
  promtool check metrics <"$WORK/t1" >"$WORK/promtool.out" 2>&1; _rc=$?
  check_eq "promtool check metrics: status (`head -n 3 "$WORK/promtool.out"`)" 0 "$_rc"
fi
check_eq "minor collections = Gc.quick_stat" "`outkey a gc.minor_collections`" \
  "`val t1 ocaml_gc_collections_total $pid 'kind="minor"'`"
check_eq "heap size = Gc.quick_stat" "$((`outkey a gc.heap_words` * 8))" \
  "`val t1 ocaml_gc_heap_size_bytes $pid`"
check_eq "mode 0644 (node_exporter may run as another user)" 644 "`stat -c %a "$TF/ocgc.prom"`"
torn=0
i=0
while test $i -lt 300; do
  # cat, not cp: cp refuses a file renamed over while it copies
  if ! cat "$TF/ocgc.prom" >"$WORK/r" 2>"$WORK/cp.err" ||
     ! head -c 7 "$WORK/r" | grep -q '^# HELP ' ||
     ! tail -n 1 "$WORK/r" | grep -q '^ocgc_serve_errors_total '; then
    torn=$((torn + 1))
    say "read $i: `cat "$WORK/cp.err"` `wc -c <"$WORK/r"` bytes, ending `tail -c 60 "$WORK/r" | tr '\n' '|'`"
  fi
  i=$((i + 1))
done
check_eq "300 reads during rewrites every 10 ms: none torn" 0 "$torn"

if command -v prometheus-node-exporter >/dev/null 2>&1; then
  ne_port=
  for _try in 1 2 3 4 5 6 7 8; do
    _p=$(( (($$ * 7 + _try * 7919) % 30000) + 20000 ))
    # Debian's defaults (its own process_* and go_* included), as an
    # operator runs it: only the textfile folder is ours.
    prometheus-node-exporter --web.listen-address="127.0.0.1:$_p" \
      --collector.textfile.directory="$TF" >"$WORK/ne.log" 2>&1 &
    ne_pid=$!
    BG_PIDS="$BG_PIDS $ne_pid"
    _n=0
    while kill -0 $ne_pid 2>/dev/null && ! curl -s -o /dev/null "http://127.0.0.1:$_p/metrics"; do
      _n=$((_n + 1)); test $_n -le 200 || break
      sleep 0.05
    done
    if curl -s -o "$WORK/ne" "http://127.0.0.1:$_p/metrics"; then ne_port=$_p; break; fi
    kill $ne_pid 2>/dev/null; wait $ne_pid 2>/dev/null
  done
  test -n "$ne_port" || { cat "$WORK/ne.log"; hard_error "node_exporter did not start on any of 8 ports"; }
  check_eq "node_exporter: no textfile error" 0 \
    "`awk '$1 == "node_textfile_scrape_error" { print $2 }' "$WORK/ne"`"
  # A family that clashes with one of node_exporter's own is dropped from
  # its answer, with an error in its log at every scrape (ocgc's process_*
  # were, before they became ocaml_process_*).
  # (By the program's samples, not by the TYPE lines: node_exporter's own
  # process_cpu_seconds_total has one.)
  grep -F "pid=\"$pid\"" "$TF/ocgc.prom" | sed 's/{.*//' | sort -u >"$WORK/fams.file"
  grep -F "pid=\"$pid\"" "$WORK/ne" | sed 's/{.*//' | sort -u >"$WORK/fams.ne"
  missing=`comm -23 "$WORK/fams.file" "$WORK/fams.ne" | tr '\n' ' '`
  check_eq "node_exporter serves the program's samples of every name of the file (missing: $missing)" "" "$missing"
  check_gt "the program's names in the file" 20 "`wc -l <"$WORK/fams.file"`"
  # (Its other collectors may fail on a given machine: only errors about
  # the file count.)
  check_false "node_exporter logs no error about the file (`grep -m1 'level=error' "$WORK/ne.log"`)" \
    grep -Eq 'level=error.*(textfile|collected metric|ocaml|ocgc)' "$WORK/ne.log"
  # node_exporter sorts the labels: pid is not first
  ne_minors=$(grep '^ocaml_gc_collections_total{' "$WORK/ne" | grep -F "pid=\"$pid\"" |
    grep -F 'kind="minor"' | awk '{ s += $NF } END { printf "%.0f\n", s }')
  check_eq "node_exporter serves the program's minor collections" \
    "`outkey a gc.minor_collections`" "$ne_minors"
  kill $ne_pid; wait $ne_pid 2>/dev/null
else
  say "prometheus-node-exporter is missing (apt-get install prometheus-node-exporter): not read by it"
fi

kill -TERM "$tf_pid"
ocgc_wait tf
check_eq "SIGTERM: exit status 0" 0 "`rc_of tf`"
check_false "the file is removed at exit" test -e "$TF/ocgc.prom"
check_eq "no temporary file left in its folder" "" "`ls -A "$TF"`"

say "== a folder that is not there"
: >"$WORK/afile"
serve bad --listen 127.0.0.1:0 --textfile "$WORK/afile/ocgc.prom" --interval 0.02 "$pid"
wait_for "the error line" grep -q 'cannot create a file in the folder of' "$WORK/bad.err"
check_eq "/metrics is still served" 200 "`get b1 /metrics`"
check_gt "the failed writes are counted" 0 "`awk '$1 == "ocgc_serve_errors_total" { print $2 }' "$WORK/b1"`"
check_eq "said once, not at every interval" 1 "`grep -c 'cannot' "$WORK/bad.err"`"
rm "$WORK/afile"
mkdir "$WORK/afile"
wait_for "the file, once the folder is there" test -s "$WORK/afile/ocgc.prom"
wait_for "the 'written again' line" grep -q 'written again' "$WORK/bad.err"
kill -TERM "$srv"
ocgc_wait bad
check_eq "SIGTERM: exit status 0" 0 "`rc_of bad`"

say "== a full disk"
SMALL=$WORK/small
mkdir "$SMALL"
if mount -t tmpfs -o size=64k ocgc-test "$SMALL" 2>"$WORK/mount.err"; then
  ocgc_bg full serve --textfile "$SMALL/ocgc.prom" --interval 0.02 "$pid"
  full_pid=$OCGC_BGPID
  wait_for "the text file" test -s "$SMALL/ocgc.prom"
  dd if=/dev/zero of="$SMALL/fill" bs=1k count=1024 2>/dev/null
  cp "$SMALL/ocgc.prom" "$WORK/before-full"
  wait_for "the error line" grep -q 'No space left on device' "$WORK/full.err"
  sleep 0.1
  check_true "the old file is kept whole" test "`tail -n 1 "$SMALL/ocgc.prom" | cut -d' ' -f1`" = ocgc_serve_errors_total
  check_eq "no temporary file left" "fill ocgc.prom" "`ls -A "$SMALL" | tr '\n' ' ' | sed 's/ $//'`"
  rm "$SMALL/fill"
  wait_for "the 'written again' line" grep -q 'written again' "$WORK/full.err"
  kill -TERM "$full_pid"
  ocgc_wait full
  check_eq "SIGTERM: exit status 0" 0 "`rc_of full`"
  umount "$SMALL"
else
  say "cannot mount a tmpfs here (`head -n 1 "$WORK/mount.err"`): the full-disk part is skipped"
fi

target_stop a "$pid"
finish
