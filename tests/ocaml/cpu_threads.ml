(* cpu_threads.ml - two threads that burn CPU, each in its own function
   (worker_a, worker_b), yielding the runtime lock between rounds, for
   cpu_sample.sh: a sampler must find both threads, started after it
   began, and unwind each one's stacks.  It prints "pid N", starts the
   threads once STOPFILE.go exists, and stops when STOPFILE exists (each
   wait at most about 120 s).  Usage: cpu_threads STOPFILE *)

let[@inline never] spin n =
  let r = ref 0 in
  for i = 1 to n do
    r := !r + (i lxor (!r lsr 3))
  done;
  !r

let[@inline never] worker_a () = 1 + spin 300_000
let[@inline never] worker_b () = 1 + spin 300_000

let loop stop f () =
  let t0 = Unix.gettimeofday () and n = ref 0 in
  while (!n land 63 <> 0 || not (Sys.file_exists stop)) && Unix.gettimeofday () -. t0 < 120. do
    ignore (f ());
    incr n;
    Thread.yield ()
  done

let () =
  let stop = Sys.argv.(1) in
  Ocgc_test.pid ();
  Ocgc_test.wait_for (stop ^ ".go");
  let a = Thread.create (loop stop worker_a) () in
  let b = Thread.create (loop stop worker_b) () in
  Thread.join a;
  Thread.join b
