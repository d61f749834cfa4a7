(* exec_name.ml - a ring's name after exec.  It collects (so its ring and
   the ring's name exist), then, with "self", replaces itself, or with
   "child", forks a child that collects (making its own ring) and replaces
   itself, by a shell that opens /etc/passwd on descriptors 3 to 9 (the
   numbers a ring's memfd gets), prints "ready" and sleeps.  Prints "pid"
   (the process that execs, for "self"; the parent, for "child") and
   "child.pid".  The parent of "child" waits for its child. *)
let script =
  "exec 3</etc/passwd 4</etc/passwd 5</etc/passwd 6</etc/passwd 7</etc/passwd \
   8</etc/passwd 9</etc/passwd; echo ready; exec sleep 600"

let become_shell () = Unix.execv "/bin/sh" [| "/bin/sh"; "-c"; script |]

let collect () =
  Ocgc_test.keep (List.init 50_000 (fun i -> i));
  Gc.full_major ()

let () =
  collect ();
  match Sys.argv.(1) with
  | "self" ->
    Printf.printf "pid %d\n%!" (Unix.getpid ());
    become_shell ()
  | _ ->
    Printf.printf "pid %d\n%!" (Unix.getpid ());
    (match Unix.fork () with
     | 0 ->
       collect ();
       Printf.printf "child.pid %d\n%!" (Unix.getpid ());
       become_shell ()
     | child -> ignore (Unix.waitpid [] child))
