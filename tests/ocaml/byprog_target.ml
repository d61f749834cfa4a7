(* byprog_target.ml - for serve_byprog.sh: a short-lived program whose
   exit counters are known exactly.  It prints "pid N" and its
   Gc.quick_stat as "before.*" lines, waits until GOFILE exists, runs a GC
   workload for SECONDS seconds, waits until STOPFILE exists, and exits
   printing its counters as they are at the exit (the "exit.*" lines of
   ocgc_test_exit_with_stat: nothing allocated between them and the exit,
   so they are what the runtime's final totals say).
   Usage: byprog_target SECONDS GOFILE STOPFILE *)
external exit_with_stat : unit -> 'a = "ocgc_test_exit_with_stat"

let () =
  let secs = float_of_string Sys.argv.(1) in
  let go = Sys.argv.(2) and stop = Sys.argv.(3) in
  Ocgc_test.report ~prefix:"before" ();
  Ocgc_test.wait_for go;
  let rounds, _ = Ocgc_test.busy ~minors:0 secs in
  Ocgc_test.keep rounds;
  Ocgc_test.wait_for stop;
  exit_with_stat ()
