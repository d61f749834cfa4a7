(* cause_major_cycle_start.ml - enough allocation, with data that survives,
   for several major cycles to end and new ones to start by themselves:
   when caml_gc_dispatch finds the major GC idle, it runs a minor collection
   and a slice to start the next cycle (cause major_cycle_start). *)
let () =
  let keep = ref [] in
  for i = 1 to 3_000_000 do
    keep := i :: !keep;
    if i mod 300_000 = 0 then keep := []
  done;
  Ocgc_test.keep !keep;
  Ocgc_test.report ()
