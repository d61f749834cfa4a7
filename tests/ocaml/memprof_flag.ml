(* memprof_flag.ml - a program that starts its own statistical memory
   profiler (Gc.Memprof) and stops it again: it prints "memprof.on 1" once
   Gc.Memprof.start has returned, waits for STEPFILE, stops it, prints
   "memprof.off 1", and waits for STOPFILE.  No collection runs while it
   waits, so what its ring says then was published by the start and the
   stop themselves.
   Usage: memprof_flag STEPFILE STOPFILE *)

let () =
  Ocgc_test.pid ();
  Gc.Memprof.start ~sampling_rate:1e-4 Gc.Memprof.null_tracker;
  print_endline "memprof.on 1";
  Ocgc_test.wait_for Sys.argv.(1);
  Gc.Memprof.stop ();
  print_endline "memprof.off 1";
  Ocgc_test.wait_for Sys.argv.(2)
