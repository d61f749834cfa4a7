#!/bin/sh
# daemon_fds.sh - the program owns its descriptors: a
# daemon closes 3..1023 after the runtime made its ring, opens its log on
# 3..12 (one of them the number the ring's memfd had), and forks workers
# that write the log through each.  A forked child used to close that number blindly (the parent's
# memfd, it thought), so every worker's write failed with EBADF.  Now the
# child closes it only once fstat proves it is the ring's memfd: every
# write succeeds, the parent says once (one line) that it left the number
# alone, and its ring goes on, true to Gc.quick_stat at exit.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
ocgc_init
compile_native daemon_fds ocgc_test.ml daemon_fds.ml

workers=5
run daemon ./daemon_fds "$WORK/daemon.log" $workers
check_eq "exit status" 0 "`cat "$WORK/daemon.rc"`"
check_eq "the log's descriptors" 3,4,5,6,7,8,9,10,11,12 "`outkey daemon log_fds`"
check_eq "workers whose write succeeded" $workers "`outkey daemon workers_ok`"
check_eq "the parent's write" ok "`outkey daemon parent_write`"
check_eq "lines in the log" $(((workers + 1) * 10)) "`wc -l <"$WORK/daemon.log" | tr -d ' '`"
check_eq "stderr: one line, whatever the number of forks" 1 "`stderr_lines daemon`"
check_true "it says the descriptor was left alone (`head -c 200 "$WORK/daemon.err"`)" \
  grep -q "descriptor [0-9]* is no longer the ring's" "$WORK/daemon.err"
ring_of daemon
dump_ring "$RING" daemon
check_lifecycle daemon
check_totals_agree daemon
finish
