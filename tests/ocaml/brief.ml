(* brief.ml - for serve_brief.sh and serve_flood.sh: a program that lives
   about 30 ms, does MINORS minor collections (default 3) about 10 ms
   apart, and exits printing its Gc.quick_stat counters as they are at the
   exit itself (the "exit.*" lines of ocgc_test_exit_with_stat: nothing
   allocated between them and the exit, so they are what the runtime's
   final totals say).  MINORS 0: it exits at once, having allocated
   nothing to speak of (the flood's processes).
   Usage: brief [MINORS [GAP_SECONDS]] *)
external exit_with_stat : unit -> 'a = "ocgc_test_exit_with_stat"

let () =
  let minors = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 3 in
  let gap = if Array.length Sys.argv > 2 then float_of_string Sys.argv.(2) else 0.01 in
  let keep = ref [] in
  for i = 1 to minors do
    keep := List.init 100 (fun j -> i + j) :: !keep;
    Gc.minor ();
    Unix.sleepf gap
  done;
  ignore (Sys.opaque_identity !keep);
  exit_with_stat ()
