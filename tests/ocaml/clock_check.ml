(* clock_check.ml - Gc.minor calls timed by the program itself, for the
   producer's timestamps to be checked against (phases_clock.sh).  It first
   runs for 100 ms, past the 20 ms in which the producer measures the TSC's
   rate, then makes CALLS calls of Gc.minor, each promoting a list of 20,000
   cells (a collection of about 100 us to 1 ms), and prints for each one the
   wall clock (Unix.gettimeofday, ns) just before and just after it:
   "call I T0 T1".  Usage: clock_check [CALLS] (default 8). *)

let calls = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 8

let () =
  let start = Unix.gettimeofday () in
  while Unix.gettimeofday () -. start < 0.1 do
    ignore (Sys.opaque_identity (ref 0))
  done;
  for i = 1 to calls do
    let keep = List.init 20000 (fun j -> j + i) in
    let t0 = Unix.gettimeofday () in
    Gc.minor ();
    let t1 = Unix.gettimeofday () in
    Printf.printf "call %d %.0f %.0f\n" i (t0 *. 1e9) (t1 *. 1e9);
    ignore (Sys.opaque_identity keep)
  done;
  Printf.printf "pid %d\n" (Unix.getpid ())
