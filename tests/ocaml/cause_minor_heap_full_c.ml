(* cause_minor_heap_full_c.ml - only C code allocates (Array.make of a small
   array is caml_make_vect -> caml_alloc_small, flagged CAML_FROM_C): minor
   collections caused by minor_heap_full_c. *)
let () =
  for i = 1 to 30_000 do
    Ocgc_test.keep (Array.make 100 i)
  done;
  Ocgc_test.report ()
