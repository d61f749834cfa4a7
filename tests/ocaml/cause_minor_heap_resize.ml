(* cause_minor_heap_resize.ml - Gc.set changes the minor heap's size while it
   holds data: caml_set_minor_heap_size empties it first (cause
   minor_heap_resize). *)
let () =
  for i = 1 to 4 do
    Ocgc_test.keep (List.init 1000 (fun j -> j + i));
    Gc.set { (Gc.get ()) with Gc.minor_heap_size = 65536 * i }
  done;
  Ocgc_test.report ()
