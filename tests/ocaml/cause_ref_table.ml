(* cause_ref_table.ml - more major-to-minor pointers than the remembered set
   holds (minor_heap_wsz / 8 entries): caml_realloc_ref_table requests a
   minor collection (cause ref_table). *)
let () =
  let a = Array.make 100_000 None in (* in the major heap *)
  for round = 1 to 3 do
    for i = 0 to Array.length a - 1 do
      a.(i) <- Some (i + round) (* a young block in a major array *)
    done
  done;
  Ocgc_test.keep a;
  Ocgc_test.report ()
