(* cause_custom_table.ml - more young custom blocks with a finaliser than the
   custom table holds (minor_heap_wsz / 8): caml_realloc_custom_table
   requests a minor collection (cause custom_table).  The blocks come from
   a C stub (ocgc_stubs.c) and cost no out-of-heap memory. *)
type t
external final_block : unit -> t = "ocgc_test_final_block"

let () =
  for _ = 1 to 200_000 do
    Ocgc_test.keep (final_block ())
  done;
  Ocgc_test.report ()
