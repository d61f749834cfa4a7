(* exec_watch.ml - a program that execs under watch (serve_exec.sh).  As
   "first" it collects (minor collections), prints its Gc.quick_stat as
   "first.*" lines, waits until GOFILE exists, then replaces itself (same
   pid, same start time) by itself as "second", which collects a different
   number of times, prints "second.*" lines and waits until STOPFILE
   exists.  Each wait gives up after about 120 s.  With NEXT, "first"
   execs the program NEXT instead of itself (a copy of it under another
   name: another program, as its ring names it).
   Usage: exec_watch first|second GOFILE STOPFILE [NEXT] *)

let collect n =
  for _ = 1 to n do
    Ocgc_test.keep (List.init 1_000 (fun i -> i));
    Gc.minor ()
  done

let () =
  let go = Sys.argv.(2) and stop = Sys.argv.(3) in
  match Sys.argv.(1) with
  | "first" ->
    collect 20;
    Ocgc_test.report ~prefix:"first" ();
    Ocgc_test.wait_for go;
    let next = if Array.length Sys.argv > 4 then Sys.argv.(4) else Sys.executable_name in
    Unix.execv next [| next; "second"; go; stop |]
  | _ ->
    collect 300;
    Ocgc_test.report ~prefix:"second" ~pid_key:"second.pid" ();
    Ocgc_test.wait_for stop
