(* memprof_retain.ml - much retained, more allocated and dropped, for the
   followed-block limit of ocgc's allocation profile: K arrays of 100
   fields and their list cells (104 words each, Memprof_funs.retain) kept
   to the end, then N short-lived tuples (11 words each, dead at once), a
   full major, and "kept_words W" (Obj.reachable_words of what it keeps).
   Usage: memprof_retain K N *)

let () =
  let k = int_of_string Sys.argv.(1) and n = int_of_string Sys.argv.(2) in
  Ocgc_test.pid ();
  let kept = Memprof_funs.retain k in
  Memprof_funs.alloc_a n;
  Gc.full_major ();
  Printf.printf "kept_words %d\n%!" (Obj.reachable_words (Obj.repr kept));
  Ocgc_test.keep kept
