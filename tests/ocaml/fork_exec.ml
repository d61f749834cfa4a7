(* fork_exec.ml - a program that starts other programs the way many do:
   fork, and in the child build the argument vector and exec.  The child
   runs a little OCaml code (it allocates the vector) between the fork and
   the exec, and makes no collection.
   Usage: fork_exec N PROGRAM: N children exec PROGRAM one after the
   other, each waited for; then "pid P" and "children N".
   fork_exec collect: one child allocates 10,000 list cells (30,000
   words), then collects (its first GC event) and exits; then "pid P" and
   "child.pid C". *)

let wait child =
  match Unix.waitpid [] child with
  | _, Unix.WEXITED 0 -> ()
  | _ ->
      prerr_endline "fork_exec: a child failed";
      exit 2

let () =
  if Sys.argv.(1) = "collect" then (
    match Unix.fork () with
    | 0 ->
        let l = List.init 10_000 (fun i -> i) in
        Gc.minor ();
        ignore (Sys.opaque_identity l);
        exit 0
    | child ->
        wait child;
        Printf.printf "pid %d\nchild.pid %d\n%!" (Unix.getpid ()) child)
  else begin
    let n = int_of_string Sys.argv.(1) and prog = Sys.argv.(2) in
    for i = 1 to n do
      match Unix.fork () with
      | 0 -> Unix.execv prog (Array.of_list [ prog; string_of_int i ])
      | child -> wait child
    done;
    Printf.printf "pid %d\nchildren %d\n%!" (Unix.getpid ()) n
  end
