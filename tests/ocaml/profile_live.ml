(* profile_live.ml - known allocations (memprof_funs.ml) made while
   `ocgc profile` watches: the program prints where its executable is
   and "ready 1", waits for DIR/go (collecting the minor heap meanwhile,
   so that a control word written to its ring is read), allocates 1:2:4
   from alloc_a, alloc_b and alloc_c and retains K arrays, runs a full
   major, prints "allocated 1", waits for DIR/end and prints how many
   arrays it kept.  With a fourth argument "own", the program runs its own
   Gc.Memprof (a tracker that keeps nothing) from the start.
   Usage: profile_live DIR N K [own] *)

(* A word allocated before each Gc.minor: an empty minor heap is not
   collected, and the control word is read at the end of a collection. *)
let wait_for f =
  while not (Sys.file_exists f) do
    ignore (Sys.opaque_identity (ref 0));
    Gc.minor ();
    Unix.sleepf 0.005
  done

let () =
  let dir = Sys.argv.(1) in
  let n = int_of_string Sys.argv.(2) and k = int_of_string Sys.argv.(3) in
  if Array.length Sys.argv > 4 && Sys.argv.(4) = "own" then
    Gc.Memprof.start ~sampling_rate:1e-4 ~callstack_size:8 Gc.Memprof.null_tracker;
  Printf.printf "exe_base %s\nready 1\n%!" (Memprof_funs.exe_base ());
  wait_for (Filename.concat dir "go");
  Memprof_funs.alloc_a n;
  Memprof_funs.alloc_b (2 * n);
  Memprof_funs.alloc_c (4 * n);
  let kept = Memprof_funs.retain k in
  Gc.full_major ();
  Printf.printf "allocated 1\n%!";
  wait_for (Filename.concat dir "end");
  Printf.printf "kept %d\n%!" (List.length kept)
