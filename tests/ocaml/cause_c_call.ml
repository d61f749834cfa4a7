(* cause_c_call.ml - C code calls caml_minor_collection() on a non-empty
   minor heap (cause c_call); the stub is in ocgc_stubs.c. *)
external minor_collection : unit -> unit = "ocgc_test_minor_collection"

let () =
  for i = 1 to 5 do
    Ocgc_test.keep (List.init 1000 (fun j -> i + j));
    minor_collection ()
  done;
  Ocgc_test.report ()
