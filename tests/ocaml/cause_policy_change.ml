(* cause_policy_change.ml - Gc.set with another allocation policy: the
   runtime empties the minor heap, finishes the major cycle twice and
   compacts (cause policy_change for all of them). *)
let () =
  let keep = ref [] in
  for policy = 0 to 2 do
    keep := List.init 10_000 (fun i -> i) :: !keep;
    Gc.set { (Gc.get ()) with Gc.allocation_policy = policy }
  done;
  Ocgc_test.keep !keep;
  Ocgc_test.report ()
