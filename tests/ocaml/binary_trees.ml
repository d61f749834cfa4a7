(* binary_trees.ml - the binary-trees benchmark, allocation and nothing
   else (no Gc.* call): at a small minor heap almost every dispatch runs a
   minor collection and a major slice back to back, the case in which
   pauses built by a time gap fused separate stops.
   Usage: binary_trees DEPTH [GO_FILE]: with GO_FILE, print the pid and
   wait for that file before working (a reader attaches meanwhile). *)

type tree = Leaf | Node of tree * tree

let rec make d = if d = 0 then Node (Leaf, Leaf) else Node (make (d - 1), make (d - 1))
let rec check = function Leaf -> 0 | Node (l, r) -> 1 + check l + check r

let () =
  let max_depth = int_of_string Sys.argv.(1) in
  if Array.length Sys.argv > 2 then begin
    Ocgc_test.pid ();
    Ocgc_test.wait_for Sys.argv.(2)
  end;
  let long_lived = make max_depth in
  let sum = ref 0 in
  let d = ref 4 in
  while !d <= max_depth do
    let iters = 1 lsl (max_depth - !d + 4) in
    for _ = 1 to iters do
      sum := !sum + check (make !d)
    done;
    d := !d + 2
  done;
  Printf.printf "check %d\n" (!sum + check long_lived);
  Ocgc_test.report ()
