(* threads.ml - four system threads allocating at once: short-lived lists
 * (as alloc.ml) and a private window of medium-lived ones (as promote.ml),
 * with a Thread.yield every 64 steps, so the runtime lock changes hands
 * thousands of times a second and collections run on every thread.  Each
 * thread's result depends on its own steps only, so the printed sum is the
 * same however the threads interleave.  Usage: threads STEPS (per thread) *)

let threads = 4

let window_size = 1 lsl 12

let work id n =
  let window = Array.make window_size [] in
  let seed = ref (12345 + id) and acc = ref 0 in
  for i = 1 to n do
    let l = List.init 32 (fun j -> (i + j, j)) in
    acc := !acc + List.fold_left (fun s (a, b) -> s + (a * b)) 0 l;
    seed := ((!seed * 1103515245) + 12345) land 0x3fffffff;
    let k = (!seed lsr 8) land (window_size - 1) in
    (match window.(k) with x :: _ -> acc := !acc + x | [] -> ());
    window.(k) <- [ i; id ];
    if i land 63 = 0 then Thread.yield ()
  done;
  !acc

let () =
  let n = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 100_000 in
  let results = Array.make threads 0 in
  let run id = results.(id) <- work id n in
  let ts = List.init threads (fun id -> Thread.create run id) in
  List.iter Thread.join ts;
  Printf.printf "%d\n" (Array.fold_left ( + ) 0 results)
