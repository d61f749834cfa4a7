(* lifetime.ml - a process's whole life, for the start-to-exit time (issue
 * 24): it allocates a little (about 40,000 words: no minor collection with
 * the default minor heap), then forks FORKS children one after the other,
 * each of which allocates as much, collects once (so that an ocgc child
 * makes its own ring) and exits; the parent waits for each, then exits.
 * Prints the sum of what it allocated, so that every runtime's run can be
 * checked to compute the same.  Usage: lifetime FORKS *)
let work seed =
  let l = List.init 10_000 (fun i -> i + seed) in
  List.fold_left ( + ) 0 l

let () =
  let forks = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 0 in
  let sum = ref (work 0) in
  for i = 1 to forks do
    match Unix.fork () with
    | 0 ->
      let s = work i in
      Gc.minor ();
      exit (if s > 0 then 0 else 1)
    | pid ->
      (match Unix.waitpid [] pid with
       | _, Unix.WEXITED 0 -> sum := !sum + 1
       | _ -> sum := !sum - 1_000_000)
  done;
  Printf.printf "%d\n" !sum
