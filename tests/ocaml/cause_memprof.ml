(* cause_memprof.ml - Gc.Memprof samples allocations from OCaml code, and
   its callback allocates: when, after the callbacks, the sampled block no
   longer fits in the minor heap, caml_memprof_track_young calls
   caml_gc_dispatch (counter FORCE_MINOR_MEMPROF: cause memprof).  The
   sampled blocks are big (a 60-element list literal is one combined
   allocation of 180 words) and the callbacks allocate about as much, so
   that this happens at about every other minor collection. *)
let () =
  let tracker =
    { Gc.Memprof.null_tracker with
      Gc.Memprof.alloc_minor = (fun _ -> Some (Array.make 100 0)) }
  in
  Gc.Memprof.start ~sampling_rate:1e-2 ~callstack_size:0 tracker;
  let n = ref 0 in
  for i = 1 to 30_000 do
    let l =
      [ i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i;
        i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i;
        i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i; i ]
    in
    n := !n + List.length (Sys.opaque_identity l)
  done;
  Gc.Memprof.stop ();
  Printf.printf "n %d\n" !n;
  Ocgc_test.report ()
