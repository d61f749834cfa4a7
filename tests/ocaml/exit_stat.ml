(* exit_stat.ml - allocation after the last collection, then an exit with
   the minor heap still holding it: the final totals must count it, as
   Gc.quick_stat does.  Prints "pid N", its Gc.quick_stat
   after its last collection (the gc. lines), then, with nothing allocated between
   them and the exit, the counters at exit (the exit. lines).
   Usage: exit_stat WORDS (roughly how many words to leave in the minor heap;
   0: none). *)
external exit_with_stat : unit -> 'a = "ocgc_test_exit_with_stat"

let () =
  let words = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 0 in
  Ocgc_test.report ();
  (* Small blocks of 3 words (list cells): far fewer than the minor heap
     holds, so no collection runs. *)
  let l = List.init (words / 3) (fun i -> i) in
  Ocgc_test.keep l;
  exit_with_stat ()
