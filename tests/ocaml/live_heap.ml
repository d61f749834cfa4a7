(* live_heap.ml - a program whose heap after GC is known: it keeps 200
   arrays of 1,000 words (200,200 words with their headers), makes garbage,
   ends major cycles (Gc.full_major), prints what Gc.stat says of the heap
   then ("stat.*" lines), and waits until STOPFILE exists.  The wait
   neither allocates in the major heap nor collects, so the heap of the
   last cycle's end stays the one printed.
   Usage: live_heap STOPFILE *)

let () =
  Ocgc_test.pid ();
  let kept = Array.init 200 (fun i -> Array.make 1000 i) in
  Ocgc_test.keep kept;
  for i = 1 to 200 do Ocgc_test.keep (Array.make 5000 i) done;
  Ocgc_test.keep kept;
  Gc.full_major ();
  let s = Gc.stat () in
  Printf.printf "stat.heap_words %d\nstat.free_words %d\nstat.live_words %d\nstat.fragments %d\n%!"
    s.Gc.heap_words s.Gc.free_words s.Gc.live_words s.Gc.fragments;
  Ocgc_test.wait_for Sys.argv.(1)
