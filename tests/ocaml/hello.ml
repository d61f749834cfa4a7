(* hello.ml - a small program whose output does not depend on the runtime,
   the ring or the pid: the behaviour tests compare its stdout across runs
   (ring on, ring off, ring impossible).  It allocates and collects, so the
   hooks run.  Usage: hello [EXIT_CODE]. *)
let () =
  let code = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 0 in
  let l = List.init 100_000 (fun i -> i) in
  let sum = List.fold_left ( + ) 0 l in
  Gc.full_major ();
  let t = Hashtbl.create 16 in
  for i = 1 to 50_000 do Hashtbl.replace t i (string_of_int i) done;
  Gc.compact ();
  Printf.printf "hello from the ocgc integration tests\nsum %d\ntable %d\n"
    sum (Hashtbl.length t);
  exit code
