(* attach_target.ml - a program to attach to while it runs (attach_*.sh).
   It prints "pid N", runs a GC workload (short- and long-lived allocation,
   major slices, full majors) for SECONDS seconds, compacts, prints its
   Gc.quick_stat (Ocgc_test.report: Gc.minor first) and then, if given
   STOPFILE, waits until that file exists (at most about 120 s) before it
   exits.  The wait neither allocates nor collects, so the Gc counters it
   printed stay those of the process while a test attaches.
   Usage: attach_target SECONDS [STOPFILE] *)

let () =
  let secs = float_of_string Sys.argv.(1) in
  let stop = if Array.length Sys.argv > 2 then Some Sys.argv.(2) else None in
  Ocgc_test.pid ();
  let rounds, sum = Ocgc_test.busy secs in
  Gc.compact ();
  Printf.printf "rounds %d\nsum %d\n" rounds sum;
  Ocgc_test.report ();
  match stop with
  | None -> ()
  | Some f -> Ocgc_test.wait_for f
