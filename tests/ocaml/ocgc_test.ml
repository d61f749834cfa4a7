(* ocgc_test.ml - shared by the integration test programs: print the
   process's own Gc.quick_stat as "key value" lines that
   tests/integration/lib.sh reads (check_stat_agrees).

   [report ()] first empties the minor heap with Gc.minor (), so that
   quick_stat's minor_words (which counts the words still in the minor heap)
   equals the sum of what the minor collections found; then it reads the
   counters, and only then allocates to print them. *)

let print_stat ?(prefix = "gc") (s : Gc.stat) =
  let p k v = Printf.printf "%s.%s %s\n" prefix k v in
  let i k v = p k (string_of_int v) in
  let f k v = p k (Printf.sprintf "%.0f" v) in
  i "minor_collections" s.Gc.minor_collections;
  i "major_collections" s.Gc.major_collections;
  i "compactions" s.Gc.compactions;
  i "forced_major_collections" s.Gc.forced_major_collections;
  f "minor_words" s.Gc.minor_words;
  f "promoted_words" s.Gc.promoted_words;
  f "major_words" s.Gc.major_words;
  i "heap_words" s.Gc.heap_words;
  i "top_heap_words" s.Gc.top_heap_words;
  i "heap_chunks" s.Gc.heap_chunks

(* The last thing a test program does: nothing may collect after it. *)
let report ?(prefix = "gc") ?(pid_key = "pid") () =
  Gc.minor ();
  let s = Gc.quick_stat () in
  Printf.printf "%s %d\n" pid_key (Unix.getpid ());
  print_stat ~prefix s;
  flush stdout

let pid () = Printf.printf "pid %d\n%!" (Unix.getpid ())

(* Keep a value alive without the optimiser noticing. *)
let sink = ref (Obj.repr 0)
let keep x = sink := Obj.repr x
