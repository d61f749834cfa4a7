(* c_alloc.ml - C stubs allocating straight in the major heap
   (caml_alloc_shr, whose budget makes the runtime request a major slice:
   alloc_shr) and custom blocks holding out-of-heap memory
   (caml_alloc_custom_mem: custom_major, custom_minor), each followed by
   Gc.major_slice, which runs a slice while the runtime's own request is
   still pending, and by a small OCaml allocation, where the runtime serves
   that request.  Every collection must have a cause.  Prints its
   Gc.quick_stat.  A large live heap keeps each major cycle long, so most
   of these slices run in the middle of a cycle. *)
external alloc_shr : int -> int array = "ocgc_test_alloc_shr"
external custom_mem : int -> Obj.t = "ocgc_test_custom_mem"

let live = Array.init 200_000 (fun i -> [ i; i + 1 ])

let () =
  for i = 1 to 1000 do
    Ocgc_test.keep (alloc_shr (if i mod 2 = 0 then 40_000 else 300));
    ignore (Gc.major_slice 0);
    Ocgc_test.keep (List.init 20 (fun j -> j));
    Ocgc_test.keep (custom_mem 100_000);
    if i mod 3 = 0 then ignore (Gc.major_slice 0);
    Ocgc_test.keep (List.init 20 (fun j -> j))
  done;
  Ocgc_test.keep live;
  Ocgc_test.report ()
