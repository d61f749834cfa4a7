(* heap_at_start.ml - prints "pid N" and its Gc.quick_stat heap figures
   ("start.heap_words" ...) before it has collected anything, then sleeps
   until file ARGV.(1) exists (a reader looks at its ring meanwhile), then
   exits.  Nothing is collected before the reader looks. *)
let () =
  let s = Gc.quick_stat () in
  Printf.printf "pid %d\nstart.heap_words %d\nstart.top_heap_words %d\nstart.heap_chunks %d\nstart.minor_collections %d\n%!"
    (Unix.getpid ()) s.Gc.heap_words s.Gc.top_heap_words s.Gc.heap_chunks
    s.Gc.minor_collections;
  Ocgc_test.wait_for Sys.argv.(1)
