(* exit_thread.ml - exit() from a C thread while OCaml collects.
   Usage: exit_thread DELAY_US.
   A C thread (not an OCaml one) sleeps DELAY_US microseconds and calls
   exit(0); meanwhile the main thread allocates without end, so the runtime
   is inside or between collections when the exit handlers run.  Prints
   "pid N" first. *)
external exit_later : int -> unit = "ocgc_test_exit_from_thread"

let () =
  Ocgc_test.pid ();
  exit_later (int_of_string Sys.argv.(1));
  let n = ref 0 in
  while true do
    incr n;
    Ocgc_test.keep (List.init 100 (fun i -> i + !n));
    if !n mod 50 = 0 then Ocgc_test.keep (Array.make 1000 !n)
  done
