(* memprof_own.ml - a program that runs its own Gc.Memprof, with an OCaml
   callback, between two phases of known allocations (memprof_funs.ml):
   alloc_a before Gc.Memprof.start, alloc_b while it runs, alloc_c after
   Gc.Memprof.stop; then a full major, its Gc.quick_stat, what its
   callbacks saw ("own.calls", "own.samples", "own.words") and where its
   executable is mapped.  Its callbacks must see on the ocgc runtime, with
   ocgc sampling on, exactly what they see on a stock runtime.
   Usage: memprof_own N *)

let () =
  let n = int_of_string Sys.argv.(1) in
  Memprof_funs.alloc_a n;
  let calls = ref 0 and samples = ref 0 and words = ref 0 in
  let cb (i : Gc.Memprof.allocation) =
    incr calls;
    samples := !samples + i.Gc.Memprof.n_samples;
    words := !words + i.Gc.Memprof.size;
    None
  in
  Gc.Memprof.start ~sampling_rate:1e-3 ~callstack_size:16
    { Gc.Memprof.null_tracker with Gc.Memprof.alloc_minor = cb; alloc_major = cb };
  Memprof_funs.alloc_b (2 * n);
  Gc.Memprof.stop ();
  Memprof_funs.alloc_c (4 * n);
  Gc.full_major ();
  Ocgc_test.report ();
  Printf.printf "own.calls %d\nown.samples %d\nown.words %d\nexe_base %s\n%!" !calls !samples
    !words (Memprof_funs.exe_base ())
