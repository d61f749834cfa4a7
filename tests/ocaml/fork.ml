(* fork.ml - Unix.fork.  Usage: fork [collect|exec|nested].
   All modes first print "before_fork.minor_collections".
   collect (default): the child allocates and collects, prints its own
   Gc.quick_stat ("child.pid", "child.gc.*") and exits; the parent waits,
   then allocates and prints its own ("pid", "gc.*").
   exec: the child calls Unix.execv "/bin/true" at once (a forked child
   must leave no ring file when it makes no GC event); the parent prints
   "child.pid" and its own statistics.
   nested: the child forks at once, before any GC event of its own, and
   waits; the grandchild collects and prints "grandchild.pid",
   "grandchild.ppid" and its statistics ("grandchild.gc." lines); the parent
   prints "child.pid" and its own. *)
let () =
  let mode = if Array.length Sys.argv > 1 then Sys.argv.(1) else "collect" in
  Ocgc_test.keep (List.init 50_000 (fun i -> i));
  Gc.full_major ();
  Ocgc_test.keep (List.init 50_000 (fun i -> i));
  Gc.compact (); (* a cause the child will not see again *)
  Printf.printf "before_fork.minor_collections %d\n%!"
    (Gc.quick_stat ()).Gc.minor_collections;
  let argv = [| "/bin/true" |] in
  match Unix.fork () with
  | 0 when mode = "exec" -> Unix.execv "/bin/true" argv
  | 0 when mode = "nested" ->
    (match Unix.fork () with
     | 0 ->
       for i = 1 to 3 do
         Ocgc_test.keep (List.init 200_000 (fun j -> i + j))
       done;
       Gc.full_major ();
       Printf.printf "grandchild.ppid %d\n" (Unix.getppid ());
       Ocgc_test.report ~prefix:"grandchild.gc" ~pid_key:"grandchild.pid" ();
       exit 0
     | grandchild ->
       (match Unix.waitpid [] grandchild with
        | _, Unix.WEXITED 0 -> exit 0
        | _ -> exit 3))
  | 0 ->
    begin
      for i = 1 to 3 do
        Ocgc_test.keep (List.init 200_000 (fun j -> i + j))
      done;
      Gc.full_major ();
      Ocgc_test.report ~prefix:"child.gc" ~pid_key:"child.pid" ();
      exit 0
    end
  | child ->
    let _, status = Unix.waitpid [] child in
    (match status with
     | Unix.WEXITED 0 -> ()
     | _ -> prerr_endline "fork: the child failed"; exit 2);
    if mode <> "collect" then Printf.printf "child.pid %d\n" child;
    for i = 1 to 2 do
      Ocgc_test.keep (List.init 100_000 (fun j -> i * j))
    done;
    Gc.compact ();
    Ocgc_test.report ()
