(* cause_minor_heap_full.ml - OCaml code (native) allocates until the minor
   heap is full: minor collections caused by minor_heap_full. *)
let () =
  let n = ref 0 in
  for i = 1 to 3_000_000 do
    let l = [ i; i ] in
    n := !n + List.length l
  done;
  Printf.printf "n %d\n" !n;
  Ocgc_test.report ()
