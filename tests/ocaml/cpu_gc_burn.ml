(* cpu_gc_burn.ml - a program whose CPU goes to three functions in a 1:2:4
   ratio while it churns the minor heap (cpu_profile.sh): burn_one,
   burn_two and burn_four run the same loop [churn] for 1, 2 and 4 units,
   each step a little arithmetic and a small list kept for a while in a
   table (so that a share of each minor heap survives: its collection
   copies, and the major heap marks and sweeps what was promoted).  The
   collections run inside the three functions' stacks, in the same ratio.
   It prints "pid N" and runs until STOPFILE exists (at most about 120
   s).  Usage: cpu_gc_burn STOPFILE *)

let keep = Array.make 4096 []

let[@inline never] churn n =
  let r = ref 0 in
  for i = 1 to n do
    for k = 1 to 40 do
      r := !r + (k lxor (!r lsr 3))
    done;
    keep.(i land 4095) <- [i; !r; i + 1; !r + 1]
  done;
  !r

let unit_work = 20_000

let[@inline never] burn_one () = 1 + churn unit_work
let[@inline never] burn_two () = 1 + churn (2 * unit_work)
let[@inline never] burn_four () = 1 + churn (4 * unit_work)

let () =
  let stop = Sys.argv.(1) in
  Ocgc_test.pid ();
  let t0 = Unix.gettimeofday () and sum = ref 0 and n = ref 0 in
  while (!n land 15 <> 0 || not (Sys.file_exists stop)) && Unix.gettimeofday () -. t0 < 120. do
    sum := !sum + burn_one () + burn_two () + burn_four ();
    incr n
  done;
  Printf.printf "rounds %d\nsum %d\n%!" !n !sum
