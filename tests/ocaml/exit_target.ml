(* exit_target.ml - for serve_exits.sh: a program that ends as it is told,
   so that a watch says how it ended.  It prints "pid N" and its
   Gc.quick_stat as "before.*" lines, waits until GOFILE exists, then:
     exit N   exits with status N (through the runtime's exit);
     loop     allocates a little and naps until a signal ends it (it gives
              up after about 120 s, exiting 3);
     exec     execs itself in mode loop, waiting for GOFILE.2 (a new image,
              the same process);
     grow     allocates 1 MiB blocks, each written whole and kept, until the
              kernel ends it (in a small memory cgroup: the OOM killer); at
              4 GiB it gives up, exiting 3.
   Usage: exit_target MODE [N] GOFILE *)

let () =
  let mode = Sys.argv.(1) in
  let go = Sys.argv.(Array.length Sys.argv - 1) in
  Ocgc_test.report ~prefix:"before" ();
  Ocgc_test.wait_for go;
  match mode with
  | "exit" -> exit (int_of_string Sys.argv.(2))
  | "loop" ->
      for _ = 1 to 24_000 do
        Ocgc_test.keep (Array.make 64 0);
        Unix.sleepf 0.005
      done;
      exit 3
  | "exec" -> Unix.execv Sys.executable_name [| Sys.argv.(0); "loop"; go ^ ".2" |]
  | "grow" ->
      let kept = ref [] in
      for i = 1 to 4096 do
        let b = Bytes.make (1 lsl 20) (Char.chr (i land 255)) in
        kept := b :: !kept;
        if i mod 16 = 0 then Printf.printf "grown %d\n%!" i
      done;
      Ocgc_test.keep !kept;
      exit 3
  | _ -> prerr_endline ("exit_target: no mode " ^ mode); exit 2
