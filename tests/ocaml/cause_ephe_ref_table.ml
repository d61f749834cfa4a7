(* cause_ephe_ref_table.ml - more young keys stored in major-heap weak
   arrays than the ephemeron remembered set holds (minor_heap_wsz / 8):
   caml_realloc_ephe_ref_table requests a minor collection (cause
   ephe_ref_table). *)
let () =
  let w = Weak.create 100_000 in (* weak arrays live in the major heap *)
  for round = 1 to 3 do
    let r = ref round in (* one young key, stored in every slot *)
    for i = 0 to Weak.length w - 1 do
      Weak.set w i (Some r)
    done;
    Ocgc_test.keep r
  done;
  Ocgc_test.keep w;
  Ocgc_test.report ()
