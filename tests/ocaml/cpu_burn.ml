(* cpu_burn.ml - a program whose CPU goes to three functions in a 1:2:4
   ratio (cpu_sample.sh): burn_one, burn_two and burn_four each call the
   same leaf [spin] for 1, 2 and 4 units of work, so a sample's leaf says
   nothing and only a stack unwound through the OCaml frames finds which
   of the three it is in.  It prints "pid N" and runs until STOPFILE
   exists (at most about 120 s); with "exec", once STOPFILE exists it
   replaces itself by a shell that burns CPU for a while (the sampler must
   stop at the exec).  Usage: cpu_burn STOPFILE [exec] *)

let[@inline never] spin n =
  let r = ref 0 in
  for i = 1 to n do
    r := !r + (i lxor (!r lsr 3))
  done;
  !r

let unit_work = 200_000

let[@inline never] burn_one () = 1 + spin unit_work
let[@inline never] burn_two () = 1 + spin (2 * unit_work)
let[@inline never] burn_four () = 1 + spin (4 * unit_work)

let () =
  let stop = Sys.argv.(1) in
  Ocgc_test.pid ();
  let t0 = Unix.gettimeofday () and sum = ref 0 and n = ref 0 in
  while (!n land 63 <> 0 || not (Sys.file_exists stop)) && Unix.gettimeofday () -. t0 < 120. do
    sum := !sum + burn_one () + burn_two () + burn_four ();
    incr n
  done;
  Printf.printf "rounds %d\nsum %d\n%!" !n !sum;
  if Array.length Sys.argv > 2 && Sys.argv.(2) = "exec" then
    Unix.execv "/bin/sh"
      [| "/bin/sh"; "-c"; "i=0; while [ $i -lt 2000000 ]; do i=$((i+1)); done" |]
