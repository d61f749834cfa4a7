(* cause_weak.ml - Weak.get_copy gives up copying a key that keeps changing
   and forces a minor collection (cause weak).  In OCaml 4.13 only C code
   can change the key during that loop, so a major-slice hook in
   ocgc_stubs.c does it; each copy of the 40 KB key is a major allocation,
   which (with a 4 Ki-word minor heap) requests the slice that runs the hook. *)
external arm : 'a Weak.t -> bytes -> bytes -> unit = "ocgc_test_weak_arm"
external swaps : unit -> int = "ocgc_test_weak_swaps"

let () =
  Gc.set { (Gc.get ()) with Gc.minor_heap_size = 4096 };
  let a = Bytes.make 40_000 'a' and b = Bytes.make 40_008 'b' in
  let w = Weak.create 1 in
  Weak.set w 0 (Some a);
  arm w a b;
  let copy = Weak.get_copy w 0 in
  Printf.printf "swaps %d\n" (swaps ());
  (match copy with
   | Some c -> Printf.printf "copy %d\n" (Bytes.length c)
   | None -> print_string "copy none\n");
  Ocgc_test.keep (a, b, w);
  Ocgc_test.report ()
