(* memprof_threads.ml - known allocations (memprof_funs.ml) from three
   systhreads at once: alloc_a and alloc_b each in a thread of its own,
   alloc_c in the main thread, interleaved as the runtime lock passes
   between them.  Then a full major, its Gc.quick_stat and where its
   executable is mapped.
   Usage: memprof_threads N *)

let () =
  let n = int_of_string Sys.argv.(1) in
  let a = Thread.create Memprof_funs.alloc_a n in
  let b = Thread.create Memprof_funs.alloc_b (2 * n) in
  Memprof_funs.alloc_c (4 * n);
  Thread.join a;
  Thread.join b;
  Gc.full_major ();
  Ocgc_test.report ();
  Printf.printf "exe_base %s\n%!" (Memprof_funs.exe_base ())
