(* cause_alloc_shr.ml - direct major-heap allocation (arrays longer than
   Max_young_wosize) past the minor heap's size: caml_alloc_shr requests a
   major slice (cause alloc_shr). *)
let () =
  for i = 1 to 200 do
    Ocgc_test.keep (Array.make 10_000 i)
  done;
  Ocgc_test.report ()
