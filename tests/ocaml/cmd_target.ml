(* cmd_target.ml - a program for the tests of `ocgc ls` and `ocgc stat`
   (cmd_*.sh) to attach to.  It prints "pid N" and its Gc.quick_stat as
   "before.*" lines (Ocgc_test.report: Gc.minor first), waits until GOFILE
   exists, runs a GC workload (short- and long-lived allocation, major
   slices, full majors) for SECONDS seconds, prints its Gc.quick_stat again
   as "gc.*" lines, and waits until STOPFILE exists before it exits.  The
   waits neither allocate nor collect (5 ms naps, a counter and a stat), so
   the growth of every Gc counter between the attach of a tool during the
   first wait and the exit is exactly gc.X - before.X.  Each wait gives up
   after about 120 s.
   Usage: cmd_target SECONDS GOFILE STOPFILE *)

type tree = Leaf | Node of tree * int * tree

let rec make d = if d = 0 then Leaf else Node (make (d - 1), d, make (d - 1))
let rec check = function Leaf -> 0 | Node (l, v, r) -> check l + v + check r

let wait_for f =
  let n = ref 0 in
  while (not (Sys.file_exists f)) && !n < 24_000 do
    Unix.sleepf 0.005;
    incr n
  done

let () =
  let secs = float_of_string Sys.argv.(1) in
  let go = Sys.argv.(2) and stop = Sys.argv.(3) in
  Ocgc_test.report ~prefix:"before" ();
  wait_for go;
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
  Printf.printf "rounds %d\nsum %d\n" !rounds !sum;
  Ocgc_test.report ();
  wait_for stop
