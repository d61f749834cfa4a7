(* ocgc_test.ml - shared by the integration test programs: print the
   process's own Gc.quick_stat as "key value" lines that
   tests/lib/lib.sh reads (check_stat_agrees).

   [report ()] first empties the minor heap with Gc.minor (), so that
   quick_stat's minor_words (which counts the words still in the minor heap)
   equals the sum of what the minor collections found; then it reads the
   counters, and only then allocates to print them, and its Gc.get settings
   as "PREFIX.config.*" lines (the ring has them as of that Gc.minor). *)

let print_stat ?(prefix = "gc") (s : Gc.stat) =
  let p k v = Printf.printf "%s.%s %s\n" prefix k v in
  let i k v = p k (string_of_int v) in
  let f k v = p k (Printf.sprintf "%.0f" v) in
  i "minor_collections" s.Gc.minor_collections;
  i "major_collections" s.Gc.major_collections;
  i "compactions" s.Gc.compactions;
  i "forced_major_collections" s.Gc.forced_major_collections;
  f "minor_words" s.Gc.minor_words;
  f "promoted_words" s.Gc.promoted_words;
  f "major_words" s.Gc.major_words;
  i "heap_words" s.Gc.heap_words;
  i "top_heap_words" s.Gc.top_heap_words;
  i "heap_chunks" s.Gc.heap_chunks

(* The last thing a test program does: nothing may collect after it. *)
let report ?(prefix = "gc") ?(pid_key = "pid") () =
  Gc.minor ();
  let s = Gc.quick_stat () in
  Printf.printf "%s %d\n" pid_key (Unix.getpid ());
  print_stat ~prefix s;
  let c = Gc.get () in
  Printf.printf "%s.config.minor_heap_size %d\n%s.config.space_overhead %d\n\
                 %s.config.max_overhead %d\n%s.config.allocation_policy %d\n"
    prefix c.Gc.minor_heap_size prefix c.Gc.space_overhead prefix c.Gc.max_overhead prefix
    c.Gc.allocation_policy;
  flush stdout

let pid () = Printf.printf "pid %d\n%!" (Unix.getpid ())

(* Keep a value alive without the optimiser noticing. *)
let sink = ref (Obj.repr 0)
let keep x = sink := Obj.repr x

(* The timed GC workload of the programs tests attach to (attach_target,
   cmd_target): short- and long-lived allocation, major slices and full
   majors for [secs] seconds.  Returns the rounds run and a checksum. *)
type tree = Leaf | Node of tree * int * tree

let rec make_tree d = if d = 0 then Leaf else Node (make_tree (d - 1), d, make_tree (d - 1))
let rec check_tree = function Leaf -> 0 | Node (l, v, r) -> check_tree l + v + check_tree r

let busy ?(minors = 0) secs =
  let t0 = Unix.gettimeofday () in
  let m0 = (Gc.quick_stat ()).Gc.minor_collections in
  let table = Hashtbl.create 16 in
  let sum = ref 0 and rounds = ref 0 in
  (* For SECS seconds, and at least MINORS minor collections: a test that
     needs so much GC activity gets it however slow the machine is. *)
  let more () =
    Unix.gettimeofday () -. t0 < secs
    || (minors > 0 && (Gc.quick_stat ()).Gc.minor_collections - m0 < minors) in
  while more () do
    incr rounds;
    for i = 1 to 20_000 do
      let l = [ i; i + 1; i + 2 ] in
      sum := !sum + List.length l
    done;
    let t = make_tree 10 in
    sum := !sum + check_tree t;
    Hashtbl.replace table (!rounds mod 2000) (Array.make 50 !rounds);
    if !rounds mod 64 = 0 then ignore (Gc.major_slice 0);
    if !rounds mod 1000 = 0 then Gc.full_major ();
    keep t
  done;
  (!rounds, !sum)

(* Wait until file [f] exists, at most about 120 s: 5 ms naps, a counter
   and a stat, so nothing is allocated in the OCaml heap meanwhile. *)
let wait_for f =
  let n = ref 0 in
  while (not (Sys.file_exists f)) && !n < 24_000 do
    Unix.sleepf 0.005;
    incr n
  done
