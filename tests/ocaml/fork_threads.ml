(* fork_threads.ml - fork while other threads are inside Gc.* calls.
   Usage: fork_threads CHILDREN.
   Four threads loop on Gc.full_major and Gc.compact with finalisers that
   yield, so at any moment some of them are inside a Gc call with the lock
   given away.  The main thread forks CHILDREN children, one after the
   other; each child never calls Gc.*: it allocates 8 M words (some 30
   minor collections at the default minor heap: an amount, not a time,
   since a loaded machine gave a child of half a second one collection),
   prints "child.pid N" and exits (Stdlib.exit 0).  The parent prints "children N", stops its threads and
   prints its Gc.quick_stat. *)
let stop = ref false

let gc_looper () =
  while not !stop do
    let r = ref (List.init 500 (fun i -> i)) in
    Gc.finalise (fun _ -> Thread.yield ()) r;
    r := [];
    Gc.full_major ();
    if Random.int 8 = 0 then Gc.compact ()
  done

let child () =
  (* 2,000 rounds of 3,000 + 1,001 words and headers *)
  for _ = 1 to 2000 do
    Ocgc_test.keep (List.init 1000 (fun i -> i));
    Ocgc_test.keep (Array.make 1000 0)
  done;
  Printf.printf "child.pid %d\n%!" (Unix.getpid ());
  exit 0

let () =
  let n = int_of_string Sys.argv.(1) in
  let ts = List.init 4 (fun _ -> Thread.create gc_looper ()) in
  Unix.sleepf 0.2;
  for _ = 1 to n do
    Unix.sleepf 0.05;
    match Unix.fork () with
    | 0 -> child ()
    | pid -> ignore (Unix.waitpid [] pid)
  done;
  stop := true;
  List.iter Thread.join ts;
  Printf.printf "children %d\n" n;
  Ocgc_test.report ()
