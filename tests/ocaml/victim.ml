(* victim.ml - for serve_flight.sh: a program that is killed.  It prints
   "pid N", then every 100 ms "minor N" with its own Gc.quick_stat's minor
   collections, working in between (allocating, so that the minor heap
   fills: several minor collections a tick), until a signal ends it.  The
   last line it printed is a lower bound of what its runtime counted when
   it died.  Usage: victim *)
let () =
  Ocgc_test.pid ();
  let t0 = Unix.gettimeofday () in
  let next = ref (t0 +. 0.1) in
  while true do
    Ocgc_test.keep (List.init 2000 (fun i -> (i, i)));
    let now = Unix.gettimeofday () in
    if now >= !next then begin
      Printf.printf "minor %d\n%!" (Gc.quick_stat ()).Gc.minor_collections;
      next := !next +. 0.1;
      Unix.sleepf 0.01
    end
  done
