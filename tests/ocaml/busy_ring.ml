(* busy_ring.ml - a program whose ring is full and being written when a
   reader comes (serve_lost_attach.sh): it runs about 10 minor collections
   every millisecond (some 100,000 events a second), all the time, prints
   "pid N" first and "ready 1" once it has run SECONDS (time for its ring
   to wrap), then goes on until STOPFILE exists (at most about 300 s).
   Usage: busy_ring SECONDS STOPFILE *)

let () =
  let secs = float_of_string Sys.argv.(1) and stop = Sys.argv.(2) in
  Ocgc_test.pid ();
  let t0 = Unix.gettimeofday () in
  let said = ref false and n = ref 0 in
  while (not (Sys.file_exists stop)) && !n < 300_000 do
    for _ = 1 to 10 do
      Ocgc_test.keep (Array.make 4 !n);
      Gc.minor ()
    done;
    if (not !said) && Unix.gettimeofday () -. t0 >= secs then begin
      print_endline "ready 1";
      said := true
    end;
    Unix.sleepf 0.001;
    incr n
  done
