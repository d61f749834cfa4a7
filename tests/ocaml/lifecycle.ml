(* lifecycle.ml - looks at its own ring entry while it runs and prints what
   it saw: "pid N", "ring_exists true|false", "ring_kind" (link|file|other),
   "ring_perm" (octal), "ring_uid"; for a link "ring_link" (its target) and
   "ring_target_kind", "ring_target_perm", "ring_target_uid" (what it leads
   to); "dir_perm".  The folder is argv.(1), else
   $OCAML_RUNTIME_EVENTS_DIR.  Then it collects and exits with argv.(2)
   (default 0); with argv.(3) = "raise" it dies of an uncaught exception
   instead, with "sleep" it sleeps for a minute (to be killed). *)
let () =
  let dir =
    if Array.length Sys.argv > 1 && Sys.argv.(1) <> "" then Sys.argv.(1)
    else try Sys.getenv "OCAML_RUNTIME_EVENTS_DIR" with Not_found -> "."
  in
  let code = if Array.length Sys.argv > 2 then int_of_string Sys.argv.(2) else 0 in
  Ocgc_test.keep (List.init 10_000 (fun i -> i));
  Gc.full_major ();
  let pid = Unix.getpid () in
  let path = Filename.concat dir (string_of_int pid ^ ".events") in
  Printf.printf "pid %d\n" pid;
  (match Unix.lstat path with
   | st ->
     Printf.printf "ring_exists true\nring_kind %s\nring_perm %o\nring_uid %d\n"
       (match st.Unix.st_kind with Unix.S_REG -> "file" | Unix.S_LNK -> "link"
                                  | _ -> "other")
       st.Unix.st_perm st.Unix.st_uid
   | exception Unix.Unix_error _ -> print_string "ring_exists false\n");
  (match Unix.readlink path, Unix.stat path with
   | target, st ->
     Printf.printf "ring_link %s\nring_target_kind %s\nring_target_perm %o\nring_target_uid %d\n"
       target (if st.Unix.st_kind = Unix.S_REG then "file" else "other")
       st.Unix.st_perm st.Unix.st_uid
   | exception Unix.Unix_error _ -> ());
  (match Unix.lstat dir with
   | st -> Printf.printf "dir_perm %o\n" st.Unix.st_perm
   | exception Unix.Unix_error _ -> print_string "dir_perm none\n");
  Printf.printf "euid %d\n" (Unix.geteuid ());
  Ocgc_test.report ~prefix:"gc" ~pid_key:"pid_again" ();
  match if Array.length Sys.argv > 3 then Sys.argv.(3) else "" with
  | "raise" -> raise Exit
  | "sleep" -> Unix.sleep 60; exit code
  | _ -> exit code
