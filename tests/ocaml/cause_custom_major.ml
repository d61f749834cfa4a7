(* cause_custom_major.ml - big bigarrays: their out-of-heap memory, beyond
   what counts against the minor heap, speeds up the major GC
   (caml_adjust_gc_speed requests a major slice: cause custom_major). *)
let () =
  for i = 1 to 40 do
    let a = Bigarray.Array1.create Bigarray.char Bigarray.c_layout 1_000_000 in
    Bigarray.Array1.fill a (Char.chr (i land 255));
    Ocgc_test.keep a;
    ignore (Sys.opaque_identity [ i ])
  done;
  Ocgc_test.report ()
