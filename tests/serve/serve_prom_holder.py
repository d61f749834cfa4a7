"""serve_prom_holder.py - for serve_prometheus.sh: a stand-in for a stock
OCaml 5 program whose ring is FILE (a copy of a fixture named
DIR/<its own pid>.events).  It maps FILE shared and writable, as OCaml 5's
runtime maps its ring (that is what makes a process a ring's producer for
libocgc: a reader maps read-only), names itself NAME (/proc/PID/comm, which
`ocgc serve` labels a stock ring's series with), prints "pid N" and
"ready 1", and waits until STOPFILE exists (at most about 300 s, so that a
test that died leaves nothing behind for long).

  serve_prom_holder.py FILE NAME STOPFILE
"""
import ctypes
import mmap
import os
import sys
import time

PR_SET_NAME = 15


def main(path, name, stop):
    with open(path, "r+b") as f:
        ring = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED,
                         prot=mmap.PROT_READ | mmap.PROT_WRITE)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()), 0, 0, 0) != 0:
        sys.exit("serve_prom_holder.py: prctl: errno %d" % ctypes.get_errno())
    print("pid %d\nready 1" % os.getpid(), flush=True)
    for _ in range(6000):
        if os.path.exists(stop):
            break
        time.sleep(0.05)
    ring.close()


if __name__ == "__main__":
    main(*sys.argv[1:4])
