(* alloc.ml - allocation-heavy workload: short-lived small blocks.
 *
 * Each step builds a 64-element list of pairs, maps it and folds it; nothing
 * survives the step, so almost every minor collection finds little alive.
 * With the default 256 Ki-word minor heap this is an ordinary GC rate; run
 * with OCAMLRUNPARAM=s=4k it is the stress run (a minor collection every few
 * microseconds).  Usage: alloc STEPS *)

let step i =
  let l = List.init 64 (fun j -> (i + j, j)) in
  let l = List.rev_map (fun (a, b) -> (a * b) + 1) l in
  List.fold_left ( + ) 0 l

let () =
  let n = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 100_000 in
  let acc = ref 0 in
  for i = 1 to n do
    acc := !acc + step i
  done;
  Printf.printf "%d\n" !acc
