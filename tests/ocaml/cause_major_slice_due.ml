(* cause_major_slice_due.ml - allocation from OCaml code crosses the middle
   of the minor heap (young_trigger = young_alloc_mid): caml_gc_dispatch
   runs a major slice, caused by major_slice_due. *)
let () =
  let keep = ref [] in
  for i = 1 to 3_000_000 do
    keep := i :: !keep;
    if i mod 100_000 = 0 then keep := []
  done;
  Ocgc_test.keep !keep;
  Ocgc_test.report ()
