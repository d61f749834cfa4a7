(* finaliser_block.ml - one thread's Gc.full_major runs a finaliser that
   blocks for about a second and 15,000 allocation rounds (it waits on a
   condition, giving the runtime lock away), while another thread allocates: small blocks (minor heap
   full) and arrays too large for the minor heap (alloc_shr).  None of the
   second thread's collections is caused by the first thread's Gc call.
   Prints "alloc.rounds N" and the Gc.quick_stat. *)
let m = Mutex.create ()
let c = Condition.create ()
let released = ref false
let in_finaliser = ref false

let blocker () =
  let v = ref (Array.make 10 0) in
  Gc.finalise
    (fun _ ->
      Mutex.lock m;
      in_finaliser := true;
      while not !released do Condition.wait c m done;
      Mutex.unlock m)
    v;
  v := [||];
  Gc.full_major ()

let allocator () =
  while not !in_finaliser do Thread.yield () done;
  let t0 = Unix.gettimeofday () and rounds = ref 0 in
  (* A second, and at least 15,000 rounds (45 M words: some 170 minor
     collections of the default minor heap), however slow the machine. *)
  while Unix.gettimeofday () -. t0 < 1.0 || !rounds < 15_000 do
    incr rounds;
    Ocgc_test.keep (List.init 1000 (fun i -> i));
    Ocgc_test.keep (Array.make 2000 !rounds)
  done;
  Mutex.lock m;
  released := true;
  Condition.broadcast c;
  Mutex.unlock m;
  !rounds

let () =
  let rounds = ref 0 in
  let b = Thread.create blocker () in
  let a = Thread.create (fun () -> rounds := allocator ()) () in
  Thread.join a;
  Thread.join b;
  Printf.printf "alloc.rounds %d\n" !rounds;
  Ocgc_test.report ()
