(* gc_storm.ml - many systhreads calling every Gc.* primitive at once.
   Usage: gc_storm THREADS SECONDS.
   Each thread loops for SECONDS on Gc.minor, Gc.major_slice, Gc.major,
   Gc.full_major, Gc.compact, Gc.set (a policy change now and then), Gc.stat
   and Gc.counters, while it builds lists and registers finalisers that
   yield: so threads give up the runtime lock inside each other's Gc.*
   calls (the tick thread's preemption does too).  Each thread checks what
   it computed; the main thread prints "threads.ok N" (threads whose results
   were right) and its Gc.quick_stat. *)

let worker (id, secs) =
  let t0 = Unix.gettimeofday () in
  let ok = ref true and n = ref 0 in
  while Unix.gettimeofday () -. t0 < secs do
    incr n;
    let l = List.init 2000 (fun i -> i + id) in
    let expect = (1999 * 2000 / 2) + (2000 * id) in
    let r = ref (Array.make 300 id) in
    Gc.finalise (fun _ -> Thread.yield ()) r;
    (match !n mod 8 with
     | 0 -> Gc.minor ()
     | 1 -> ignore (Gc.major_slice 0)
     | 2 -> Gc.major ()
     | 3 -> Gc.full_major ()
     | 4 -> if !n mod 64 = 4 then Gc.compact () else Gc.minor ()
     | 5 ->
       if !n mod 128 = 5 then begin
         let g = Gc.get () in
         Gc.set { g with Gc.allocation_policy = (g.Gc.allocation_policy + 1) mod 3 }
       end
     | 6 -> ignore (Gc.stat ())
     | _ -> ignore (Gc.counters ()));
    if List.fold_left ( + ) 0 l <> expect then ok := false;
    if Array.fold_left ( + ) 0 !r <> 300 * id then ok := false
  done;
  !ok

let () =
  let nthreads = int_of_string Sys.argv.(1) in
  let secs = float_of_string Sys.argv.(2) in
  let results = Array.make nthreads false in
  let ts =
    List.init nthreads (fun id ->
        Thread.create (fun () -> results.(id) <- worker (id, secs)) ())
  in
  List.iter Thread.join ts;
  Printf.printf "threads.ok %d\n" (Array.fold_left (fun a b -> if b then a + 1 else a) 0 results);
  Ocgc_test.report ()
