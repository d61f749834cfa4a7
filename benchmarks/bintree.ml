(* bintree.ml - the Benchmarks Game's binary-trees, single-threaded: a
 * long-lived tree of depth D, then many short-lived trees of every second
 * depth from 4 to D, each built and checked.  Marking walks the long-lived
 * tree and whatever survives a minor collection, so the major GC's mark
 * phase (and 4.x's page-table lookups) is a large share of the run.
 * Prints the sum of every check.  Usage: bintree DEPTH *)

type tree = Leaf | Node of tree * tree

let rec make d = if d = 0 then Node (Leaf, Leaf) else Node (make (d - 1), make (d - 1))

let rec check = function Leaf -> 0 | Node (l, r) -> 1 + check l + check r

let min_depth = 4

let () =
  let n = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 16 in
  let max_depth = max (min_depth + 2) n in
  let sum = ref (check (make (max_depth + 1))) in
  let long_lived = make max_depth in
  let d = ref min_depth in
  while !d <= max_depth do
    let iterations = 1 lsl (max_depth - !d + min_depth) in
    for _ = 1 to iterations do
      sum := !sum + check (make !d)
    done;
    d := !d + 2
  done;
  sum := !sum + check long_lived;
  Printf.printf "%d\n" !sum
