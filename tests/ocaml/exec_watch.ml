(* exec_watch.ml - a program that execs under watch (serve_exec.sh).  As
   "first" it collects (minor collections), prints its Gc.quick_stat as
   "first.*" lines, waits until GOFILE exists, then replaces itself (same
   pid, same start time) by itself as "second", which collects a different
   number of times, prints "second.*" lines and waits until STOPFILE
   exists.  Each wait gives up after about 120 s.
   Usage: exec_watch first|second GOFILE STOPFILE *)

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
    Unix.execv Sys.executable_name [| Sys.executable_name; "second"; go; stop |]
  | _ ->
    collect 300;
    Ocgc_test.report ~prefix:"second" ~pid_key:"second.pid" ();
    Ocgc_test.wait_for stop
