(* cause_shutdown.ml - run with OCAMLRUNPARAM=c=1: at exit the runtime
   finalises the heap (caml_shutdown -> caml_finalise_heap), emptying the
   minor heap and finishing the major cycle (cause shutdown).  The young
   data left by the printing is what the last minor collection finds. *)
let () =
  Ocgc_test.keep (List.init 10_000 (fun i -> i));
  Ocgc_test.report ();
  Ocgc_test.keep (List.init 1_000 (fun i -> i))
