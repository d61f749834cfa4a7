(* serve_prom_ticker.ml - for serve_prometheus.sh: a program that
   allocates a little all the time, so that every rate a dashboard plots
   moves while Prometheus scrapes it.  Every 10 ms it builds a list of
   20,000 elements (60,000 words: a minor collection every few ticks with
   the default minor heap) and keeps one list in eight for a while, so
   that some of it is promoted and the major GC works too.  It prints
   "pid N" first and runs until STOPFILE exists (at most about 300 s, so
   that a test that died leaves nothing running for long).
   Usage: serve_prom_ticker STOPFILE *)

let () =
  let stop = Sys.argv.(1) in
  Ocgc_test.pid ();
  let kept = Array.make 64 [] in
  let n = ref 0 in
  while (not (Sys.file_exists stop)) && !n < 30_000 do
    let l = List.init 20_000 (fun i -> i + !n) in
    kept.(!n land 63) <- (if !n land 7 = 0 then l else []);
    Unix.sleepf 0.01;
    incr n
  done
