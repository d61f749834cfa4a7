(* cmd_target.ml - a program for the tests of `ocgc ls` and `ocgc stat`
   (cmd_*.sh) to attach to.  It prints "pid N" and its Gc.quick_stat as
   "before.*" lines (Ocgc_test.report: Gc.minor first), waits until GOFILE
   exists, runs a GC workload (short- and long-lived allocation, major
   slices, full majors) for SECONDS seconds (SECONDS/MINORS: and at least
   MINORS minor collections, however slow the machine), prints its Gc.quick_stat again
   as "gc.*" lines, and waits until STOPFILE exists before it exits.  The
   waits neither allocate nor collect (5 ms naps, a counter and a stat), so
   the growth of every Gc counter between the attach of a tool during the
   first wait and the exit is exactly gc.X - before.X.  Each wait gives up
   after about 120 s.
   Usage: cmd_target SECONDS[/MINORS] GOFILE STOPFILE *)

let () =
  let secs, minors =
    match String.split_on_char '/' Sys.argv.(1) with
    | [ s; m ] -> (float_of_string s, int_of_string m)
    | _ -> (float_of_string Sys.argv.(1), 0)
  in
  let go = Sys.argv.(2) and stop = Sys.argv.(3) in
  Ocgc_test.report ~prefix:"before" ();
  Ocgc_test.wait_for go;
  let rounds, sum = Ocgc_test.busy ~minors secs in
  Printf.printf "rounds %d\nsum %d\n" rounds sum;
  Ocgc_test.report ();
  Ocgc_test.wait_for stop
