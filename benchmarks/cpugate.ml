(* cpugate.ml - linked first into cpucost.sh's workloads (module
 * initialisers run in link order, so this one runs before the work): a
 * gate that holds the work until the sampler runs, and the time the work
 * alone took.
 *
 * With BENCH_GATE=DIR in the environment: opens DIR/go (a FIFO the
 * harness holds open, so the open does not block), creates DIR/ready
 * (proof that this program's own code runs: its exec is behind it, and a
 * sampler attached before the exec would stop at it), blocks until a line
 * comes on DIR/go, and at exit writes to DIR/times
 *   WALL_US USER_US SYS_US
 * measured from that line: the work's own wall-clock and CPU time (all
 * threads), not the start-up nor the wait.  Without BENCH_GATE it does
 * nothing. *)

let () =
  match Sys.getenv_opt "BENCH_GATE" with
  | None -> ()
  | Some dir ->
      let go = open_in (Filename.concat dir "go") in
      close_out (open_out (Filename.concat dir "ready"));
      ignore (input_line go);
      close_in go;
      let t0 = Unix.gettimeofday () and c0 = Unix.times () in
      at_exit (fun () ->
          let t1 = Unix.gettimeofday () and c1 = Unix.times () in
          let oc = open_out (Filename.concat dir "times") in
          Printf.fprintf oc "%.0f %.0f %.0f\n"
            ((t1 -. t0) *. 1e6)
            ((c1.Unix.tms_utime -. c0.Unix.tms_utime) *. 1e6)
            ((c1.Unix.tms_stime -. c0.Unix.tms_stime) *. 1e6);
          close_out oc)
