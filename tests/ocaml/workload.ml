(* workload.ml - a mixed GC workload for the quick_stat comparisons:
   short-lived and long-lived allocation (minor collections, promotion,
   automatic major slices and cycles), direct major-heap allocation, and
   every explicit Gc entry point (Gc.minor, Gc.major_slice, Gc.major,
   Gc.full_major, Gc.compact), so that every counter quick_stat reports is
   non-zero.  Usage: workload [ROUNDS] (default 3; more = busier). *)

let rounds = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 3

(* A binary tree: allocation that survives for a while. *)
type tree = Leaf | Node of tree * int * tree

let rec make d = if d = 0 then Leaf else Node (make (d - 1), d, make (d - 1))
let rec check = function Leaf -> 0 | Node (l, v, r) -> check l + v + check r

let table = Hashtbl.create 16

let round r =
  (* short-lived garbage *)
  let acc = ref 0 in
  for i = 1 to 200_000 do
    let l = [ i; i + 1; i + 2 ] in
    acc := !acc + List.length l
  done;
  (* long-lived: a tree kept until the next round, a growing table *)
  let t = make 16 in
  for i = 1 to 20_000 do
    Hashtbl.replace table ((r * 20_000) + i) (string_of_int i)
  done;
  (* direct major-heap allocation *)
  let big = Array.make 100_000 r in
  Gc.minor ();
  ignore (Gc.major_slice 0);
  Ocgc_test.keep (t, big);
  !acc + check t + Array.length big

let () =
  let sum = ref 0 in
  for r = 1 to rounds do
    sum := !sum + round r;
    if r mod 2 = 1 then Gc.major ()
  done;
  Gc.full_major ();
  (* drop most of the table, then compact what is left *)
  Hashtbl.reset table;
  Ocgc_test.keep 0;
  Gc.compact ();
  for r = 1 to 2 do sum := !sum + round (rounds + r) done;
  (* the explicit calls on an empty minor heap, which take neither the
     minor nor the slice code path *)
  Gc.minor (); Gc.full_major ();
  Gc.minor (); Gc.compact ();
  Gc.minor (); Gc.major ();
  Gc.full_major ();
  Printf.printf "sum %d\n" !sum;
  Ocgc_test.report ()
