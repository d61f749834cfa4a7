(* memprof_ratio.ml - known allocations from known functions
   (memprof_funs.ml) for ocgc's allocation sampling: alloc_a, alloc_b and
   alloc_c make N, 2N and 4N tuples; retain K arrays kept to the end.  Then
   a full major (every dead sampled block found dead), its own
   Gc.quick_stat, where its executable is mapped, and the list's length.
   Usage: memprof_ratio N K *)

let () =
  let n = int_of_string Sys.argv.(1) and k = int_of_string Sys.argv.(2) in
  Memprof_funs.alloc_a n;
  Memprof_funs.alloc_b (2 * n);
  Memprof_funs.alloc_c (4 * n);
  let kept = Memprof_funs.retain k in
  Gc.full_major ();
  Ocgc_test.report ();
  Printf.printf "exe_base %s\nkept %d\n%!" (Memprof_funs.exe_base ()) (List.length kept)
