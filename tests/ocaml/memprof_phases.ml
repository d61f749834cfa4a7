(* memprof_phases.ml - three phases of known allocations with a pause
   between them for the test to act from outside: alloc_a makes N tuples
   of 11 words, prints "phase.a 1" and waits for STEP1; a minor
   collection (where the producer reads its control word); alloc_b makes
   2N, prints "phase.b 1", waits for STEP2; a minor collection; alloc_c
   makes 4N; then a full major, its Gc.quick_stat, where its executable
   is mapped, and "phase.c 1"; it waits for STOP.
   Usage: memprof_phases N STEP1 STEP2 STOP *)

let () =
  let n = int_of_string Sys.argv.(1) in
  Ocgc_test.pid ();
  Memprof_funs.alloc_a n;
  print_endline "phase.a 1";
  Ocgc_test.wait_for Sys.argv.(2);
  Gc.minor ();
  Memprof_funs.alloc_b (2 * n);
  print_endline "phase.b 1";
  Ocgc_test.wait_for Sys.argv.(3);
  Gc.minor ();
  Memprof_funs.alloc_c (4 * n);
  Gc.full_major ();
  Ocgc_test.report ();
  Printf.printf "exe_base %s\nphase.c 1\n%!" (Memprof_funs.exe_base ());
  Ocgc_test.wait_for Sys.argv.(4)
