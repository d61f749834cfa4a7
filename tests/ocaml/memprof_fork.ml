(* memprof_fork.ml - known allocations (memprof_funs.ml) around a fork:
   alloc_a in the parent, then a child that makes alloc_b and exits, then
   alloc_c in the parent once the child is gone.  Each ends with a full
   major; the child prints "child.pid", the parent its Gc.quick_stat and
   where the executable is mapped (the same in both).
   Usage: memprof_fork N *)

let () =
  let n = int_of_string Sys.argv.(1) in
  Ocgc_test.pid ();
  Memprof_funs.alloc_a n;
  match Unix.fork () with
  | 0 ->
      Memprof_funs.alloc_b (2 * n);
      Gc.full_major ();
      Printf.printf "child.pid %d\n%!" (Unix.getpid ());
      exit 0
  | child ->
      ignore (Unix.waitpid [] child);
      Memprof_funs.alloc_c (4 * n);
      Gc.full_major ();
      Ocgc_test.report ();
      Printf.printf "exe_base %s\n%!" (Memprof_funs.exe_base ())
