(* kind_times.ml - collections of every kind, for the per-kind times
   against GC time (kind_times.sh).  It allocates long- and short-lived
   data for ROUNDS rounds (minor collections and major slices), calling
   Gc.full_major, Gc.compact and Gc.major_slice on the way (forced cycle
   ends and compactions run by the program itself, never inside a slice).
   With "auto" it first sets max_overhead to 0, so that every major cycle
   that ends in a slice compacts from inside that slice
   (caml_compact_heap_maybe, which forces a cycle end and compacts).
   Prints "pid".  Usage: kind_times ROUNDS [auto] *)
let () =
  let rounds = int_of_string Sys.argv.(1) in
  if Array.length Sys.argv > 2 && Sys.argv.(2) = "auto" then
    Gc.set { (Gc.get ()) with Gc.max_overhead = 0 };
  Ocgc_test.pid ();
  let keep = ref [] in
  for r = 1 to rounds do
    keep := List.init 20_000 (fun i -> (i, r)) :: (if r mod 4 = 0 then [] else !keep);
    for _ = 1 to 20 do Ocgc_test.keep (List.init 10_000 (fun i -> i + r)) done;
    if r mod 5 = 0 then Gc.full_major ();
    if r mod 7 = 0 then Gc.compact ();
    if r mod 3 = 0 then ignore (Gc.major_slice 0)
  done;
  Ocgc_test.keep !keep
