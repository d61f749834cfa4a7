#!/bin/sh
# serve_first_scrape.sh - once `ocgc serve` says it listens, every request
# gets an answer of figures, even one its poll thread (the only reader of
# the rings, which renders each answer) does not take up in time: serve
# renders every kind of answer once, from its first read, before it
# listens, and a request the poll thread leaves waiting ANSWER_WAIT_NS
# (0.5 s) gets the last one.  On a machine loaded to its cores the poll
# thread of a new serve could miss those 0.5 s, and a first scrape was
# answered 503 "not ready" (serve_auth.sh's client-certificate scrapes,
# once, in fresh-debian.sh's mode C).  Here the poll thread is stopped
# for certain: a ptrace stop of that one thread (ocgc-poll), which leaves
# the HTTP thread running.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
cmd_init
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing"; exit 77; }

mkdir -m 0700 "$WORK/norings"
serve srv --listen 127.0.0.1:0 --all --dir "$WORK/norings"
poll=
for t in /proc/$srv/task/*; do
  test "`cat "$t/comm" 2>/dev/null`" = ocgc-poll && poll=${t##*/}
done
check_true "serve's poll thread is named ocgc-poll" test -n "$poll"

# stopped TID URL OUT: each of / and /metrics asked (curl) while thread TID
# alone is stopped (PTRACE_SEIZE and PTRACE_INTERRUPT; detached after);
# prints "STATUS STATUS", or "SKIP why" when ptrace is refused.
stopped() {
  python3 - "$1" "$2" "$3" <<'PY'
import ctypes, os, subprocess, sys
tid, url, out = int(sys.argv[1]), sys.argv[2].rstrip('/'), sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH = 0x4206, 0x4207, 17
if libc.ptrace(PTRACE_SEIZE, tid, None, None) != 0:
    print("SKIP ptrace refused: " + os.strerror(ctypes.get_errno())); sys.exit(0)
libc.ptrace(PTRACE_INTERRUPT, tid, None, None)
os.waitpid(tid, 0x40000000)  # __WALL: the thread is in its ptrace stop
codes = []
for path, name in (("/metrics", "m"), ("/", "i")):
    r = subprocess.run(["curl", "-s", "--max-time", "30", "-o", out + "." + name,
                        "-w", "%{http_code}", url + path], capture_output=True, text=True)
    codes.append(r.stdout)
libc.ptrace(PTRACE_DETACH, tid, None, None)
print(" ".join(codes))
PY
}
test -n "$poll" || hard_error "no poll thread to stop"
got=`stopped "$poll" "$url" "$WORK/first"`
case $got in
  SKIP*) say "SKIP part: the poll thread cannot be stopped here (${got#SKIP })" ;;
  *)
    check_eq "/metrics, the poll thread stopped: 200" 200 "${got% *}"
    check_true "... with serve's own figures" grep -q '^ocgc_serve_' "$WORK/first.m"
    check_eq "/, the poll thread stopped: 200" 200 "${got#* }"
    ;;
esac
check_eq "the poll thread let go: /metrics 200" 200 "`get m2 /metrics`"
check_true "serve still runs" kill -0 "$srv"
kill -TERM "$srv"
ocgc_wait srv
check_eq "SIGTERM: exit status" 0 "`rc_of srv`"
finish
