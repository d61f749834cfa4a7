(* daemon_fds.ml - a daemon as such programs are written: once running (its
   ring made), it closes every descriptor from 3 to 1023, as daemonizing
   code does, then opens its log, which takes the lowest free number: the
   one the ring's memfd had.  It forks WORKERS workers; each collects (and
   so makes a ring of its own) and appends a line to the log through the
   inherited descriptor, and exits 0 if the write succeeded, 1 if not.
   Then the parent appends its own line.
   Usage: daemon_fds LOG WORKERS.  Prints "log_fd", "workers_ok" (workers
   that exited 0), "parent_write ok|error", then its Gc.quick_stat ("pid",
   "gc.*"). *)
let fd_of_int (n : int) : Unix.file_descr = Obj.magic n
let int_of_fd (fd : Unix.file_descr) : int = Obj.magic fd

let append fd line =
  match Unix.write_substring fd line 0 (String.length line) with
  | n when n = String.length line -> true
  | _ -> false
  | exception Unix.Unix_error _ -> false

let () =
  let log = Sys.argv.(1) and workers = int_of_string Sys.argv.(2) in
  Ocgc_test.keep (List.init 50_000 (fun i -> i));
  Gc.full_major ();
  for n = 3 to 1023 do
    try Unix.close (fd_of_int n) with Unix.Unix_error _ -> ()
  done;
  let fds =
    List.init 10 (fun _ -> Unix.openfile log [Unix.O_WRONLY; Unix.O_CREAT; Unix.O_APPEND] 0o600)
  in
  Printf.printf "log_fds %s\n%!" (String.concat "," (List.map (fun fd -> string_of_int (int_of_fd fd)) fds));
  let append_all who = List.for_all (fun fd -> append fd (who ^ "\n")) fds in
  let ok = ref 0 in
  for i = 1 to workers do
    match Unix.fork () with
    | 0 ->
      Ocgc_test.keep (List.init 100_000 (fun j -> i + j));
      Gc.full_major ();
      exit (if append_all (Printf.sprintf "worker %d" i) then 0 else 1)
    | child ->
      (match Unix.waitpid [] child with
       | _, Unix.WEXITED 0 -> incr ok
       | _ -> ())
  done;
  Printf.printf "workers_ok %d\n" !ok;
  Printf.printf "parent_write %s\n" (if append_all "parent" then "ok" else "error");
  Ocgc_test.report ()
