(* cause_explicit.ml - every explicit Gc call, each on a non-empty minor
   heap: Gc.minor, Gc.major_slice, Gc.major, Gc.full_major, Gc.compact
   (cause explicit). *)
let () =
  let fill () = Ocgc_test.keep (List.init 10_000 (fun i -> i)) in
  fill (); Gc.minor ();
  fill (); ignore (Gc.major_slice 0);
  fill (); ignore (Gc.major_slice 1000);
  fill (); Gc.major ();
  fill (); Gc.full_major ();
  fill (); Gc.compact ();
  Ocgc_test.report ()
