(* cmd_exit.ml - a program for `ocgc run` (cmd_run.sh): a short GC
   workload (minor collections, promotion, major slices, a full major and
   a compaction), then its Gc.quick_stat (Ocgc_test.report: nothing
   collects after it), then it ends as MODE says:
     a number N    exit N
     kill          kill itself with SIGKILL
     segv          a real segmentation fault (load from address 1)
   Usage: cmd_exit MODE [ROUNDS] *)

type tree = Leaf | Node of tree * int * tree

let rec make d = if d = 0 then Leaf else Node (make (d - 1), d, make (d - 1))
let rec check = function Leaf -> 0 | Node (l, v, r) -> check l + v + check r

let () =
  let mode = Sys.argv.(1) in
  let rounds = if Array.length Sys.argv > 2 then int_of_string Sys.argv.(2) else 200 in
  let table = Hashtbl.create 16 and sum = ref 0 in
  for r = 1 to rounds do
    for i = 1 to 5_000 do
      let l = [ i; i + 1; i + 2 ] in
      sum := !sum + List.length l
    done;
    let t = make 10 in
    sum := !sum + check t;
    Hashtbl.replace table (r mod 500) (Array.make 50 r);
    if r mod 50 = 0 then ignore (Gc.major_slice 0);
    Ocgc_test.keep t
  done;
  Gc.full_major ();
  Gc.compact ();
  Printf.printf "sum %d\n" !sum;
  Ocgc_test.report ();
  (* A killed program takes its (memfd) ring with it: give `ocgc run`,
     which looks for the ring every 5 ms, time to have opened it even on a
     loaded machine, so that the report the test checks is there. *)
  if mode = "kill" || mode = "segv" then Unix.sleepf 0.3;
  match mode with
  | "kill" -> Unix.kill (Unix.getpid ()) Sys.sigkill
  | "segv" ->
    (* the immediate 0 is the word 1: reading a field of it faults; the
       runtime's SIGSEGV handler sees no stack overflow and lets it kill *)
    let r : int ref = Obj.magic (Sys.opaque_identity 0) in
    print_int !r
  | n -> exit (int_of_string n)
