(* memprof_switches.ml - the runtime lock changing hands while nothing is
   allocated: what ocgc's allocation sampling costs where there is nothing
   to sample (tests/producer/memprof_switches.sh, benchmarks/memprof.sh).
   Usage: memprof_switches writes N    a thread writes N single bytes to
                                       /dev/null, each write a blocking
                                       section (the lock let go, taken back)
          memprof_switches pingpong N  two threads hand a turn to each
                                       other N times (a mutex, a condition)
   Prints "pid N" last. *)

let writes n =
  let fd = Unix.openfile "/dev/null" [ Unix.O_WRONLY ] 0 in
  let buf = Bytes.make 1 'x' in
  let writer () =
    for _ = 1 to n do
      ignore (Unix.write fd buf 0 1)
    done
  in
  Thread.join (Thread.create writer ());
  Unix.close fd

let pingpong n =
  let m = Mutex.create () and c = Condition.create () and turn = ref 0 in
  let player me =
    for _ = 1 to n do
      Mutex.lock m;
      while !turn <> me do
        Condition.wait c m
      done;
      turn := 1 - me;
      Condition.broadcast c;
      Mutex.unlock m
    done
  in
  let a = Thread.create player 0 and b = Thread.create player 1 in
  Thread.join a;
  Thread.join b

let () =
  let n = int_of_string Sys.argv.(2) in
  (match Sys.argv.(1) with
  | "writes" -> writes n
  | "pingpong" -> pingpong n
  | w -> failwith ("memprof_switches: no workload " ^ w));
  Ocgc_test.pid ()
