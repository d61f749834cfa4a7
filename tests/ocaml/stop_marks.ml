(* stop_marks.ml - collections that share one stop of the mutator, and
   collections that the mutator runs between.  Run at a small minor heap
   (OCAMLRUNPARAM=s=4k), the allocation loop makes caml_gc_dispatch run a
   minor collection and a major slice back to back (one stop).  Then
   Gc.full_major finds a dead value whose finaliser runs OCaml code between
   the call's two rounds of collections: it calls Gc.stat, whose span is the
   finaliser's trace in the ring.  Prints "finaliser.ran N" and the
   Gc.quick_stat. *)

let ran = ref 0

let allocate () =
  let keep = Array.make 64 [] in
  for i = 1 to 200_000 do
    keep.(i land 63) <- [ i; i + 1 ]
  done;
  Ocgc_test.keep keep

(* Out of line, so that nothing on the caller's stack keeps the value. *)
let[@inline never] dead_value_with_finaliser () =
  let v = Array.make 10 0 in
  Gc.finalise (fun _ -> incr ran; ignore (Gc.stat ())) v

let () =
  allocate ();
  dead_value_with_finaliser ();
  (* The value is promoted and the cycle it was allocated in ends: the next
     cycle, which Gc.full_major's first round finishes, finds it dead. *)
  Gc.major ();
  Gc.full_major ();
  Printf.printf "finaliser.ran %d\n" !ran;
  Ocgc_test.report ()
