(* serve_busy.ml - a steadily busy program for benchmarks/serve.sh to
 * watch: bursts of allocation (the short-lived lists of alloc.ml, and
 * every 64th step a small array kept a while, so that some data is
 * promoted and the major heap works too) separated by sleeps, until
 * STOPFILE exists.  The sleeps cap what each copy takes of a core, so
 * that 50 of them leave the machine room for the exporter measured.
 * Usage: serve_busy STEPS_PER_BURST PERIOD_MS STOPFILE *)

let step i =
  let l = List.init 64 (fun j -> (i + j, j)) in
  let l = List.rev_map (fun (a, b) -> (a * b) + 1) l in
  List.fold_left ( + ) 0 l

let () =
  let steps = int_of_string Sys.argv.(1) in
  let period = float_of_string Sys.argv.(2) /. 1000. in
  let stop = Sys.argv.(3) in
  let kept = Array.make 4096 [||] in
  let acc = ref 0 and i = ref 0 in
  while not (Sys.file_exists stop) do
    for _ = 1 to steps do
      incr i;
      acc := !acc + step !i;
      if !i land 63 = 0 then kept.((!i lsr 6) land 4095) <- Array.make 16 !i
    done;
    Unix.sleepf period
  done;
  Printf.printf "%d\n" !acc
