(* cause_custom_minor.ml - many young bigarrays of 8 KiB: their memory counts
   against the minor heap's custom ratio, and past it alloc_custom_gen calls
   caml_minor_collection (cause custom_minor). *)
let () =
  for i = 1 to 3_000 do
    let a = Bigarray.Array1.create Bigarray.char Bigarray.c_layout 8192 in
    a.{0} <- Char.chr (i land 255);
    Ocgc_test.keep a
  done;
  Ocgc_test.report ()
