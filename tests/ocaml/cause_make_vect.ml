(* cause_make_vect.ml - Array.make of a major-heap array (longer than
   Max_young_wosize) whose initial value is a young block: caml_make_vect
   first promotes it with a minor collection (cause make_vect). *)
let () =
  for i = 1 to 20 do
    let init = ref i in (* young *)
    Ocgc_test.keep (Array.make 1_000 init)
  done;
  Ocgc_test.report ()
