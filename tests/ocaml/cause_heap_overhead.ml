(* cause_heap_overhead.ml - automatic compaction: a big heap is built and
   dropped, then short-lived allocation drives major cycles by themselves;
   at the end of a cycle caml_compact_heap_maybe finds the free space over
   max_overhead and compacts (cause heap_overhead). *)
let () =
  Gc.set { (Gc.get ()) with Gc.max_overhead = 200; Gc.space_overhead = 40 };
  let big = ref (List.init 1_000_000 (fun i -> i)) in
  Ocgc_test.keep !big;
  big := [];
  Ocgc_test.keep 0;
  let st = Gc.quick_stat () in
  let start = st.Gc.compactions in
  let i = ref 0 in
  while (!i land 1023 <> 0 || (Gc.quick_stat ()).Gc.compactions = start)
        && !i < 100_000_000 do
    incr i;
    Ocgc_test.keep [ !i; !i ]
  done;
  Printf.printf "iterations %d\n" !i;
  Ocgc_test.report ()
