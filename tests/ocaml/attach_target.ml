(* attach_target.ml - a program to attach to while it runs (attach_*.sh).
   It prints "pid N", runs a GC workload (short- and long-lived allocation,
   major slices, full majors) for SECONDS seconds, compacts, prints its
   Gc.quick_stat (Ocgc_test.report: Gc.minor first) and then, if given
   STOPFILE, waits until that file exists (at most about 120 s) before it
   exits.  The wait neither allocates nor collects, so the Gc counters it
   printed stay those of the process while a test attaches.
   Usage: attach_target SECONDS [STOPFILE] *)

type tree = Leaf | Node of tree * int * tree

let rec make d = if d = 0 then Leaf else Node (make (d - 1), d, make (d - 1))
let rec check = function Leaf -> 0 | Node (l, v, r) -> check l + v + check r

let () =
  let secs = float_of_string Sys.argv.(1) in
  let stop = if Array.length Sys.argv > 2 then Some Sys.argv.(2) else None in
  Ocgc_test.pid ();
  let t0 = Unix.gettimeofday () in
  let table = Hashtbl.create 16 in
  let sum = ref 0 and rounds = ref 0 in
  while Unix.gettimeofday () -. t0 < secs do
    incr rounds;
    for i = 1 to 20_000 do
      let l = [ i; i + 1; i + 2 ] in
      sum := !sum + List.length l
    done;
    let t = make 10 in
    sum := !sum + check t;
    Hashtbl.replace table (!rounds mod 2000) (Array.make 50 !rounds);
    if !rounds mod 64 = 0 then ignore (Gc.major_slice 0);
    if !rounds mod 1000 = 0 then Gc.full_major ();
    Ocgc_test.keep t
  done;
  Gc.compact ();
  Printf.printf "rounds %d\nsum %d\n" !rounds !sum;
  Ocgc_test.report ();
  match stop with
  | None -> ()
  | Some f ->
    (* 5 ms naps, a counter and a stat: no allocation in the OCaml heap *)
    let n = ref 0 in
    while (not (Sys.file_exists f)) && !n < 24_000 do
      Unix.sleepf 0.005;
      incr n
    done
