(* memprof_forkcost.ml - what a forked child of a sampling program pays
   at its first collection (where it makes its own ring and table): the
   parent samples (memprof_funs.ml's allocations), forks, and the child
   makes its first minor collection, then prints its minor page faults
   since the fork ("child.faults N", /proc/self/stat: a new process's
   count starts at 0) and the time since ("child.us T"), and exits.
   Usage: memprof_forkcost N *)

let minflt () =
  let ic = open_in "/proc/self/stat" in
  let l = input_line ic in
  close_in ic;
  let i = String.rindex l ')' in
  let f = String.split_on_char ' ' (String.sub l (i + 2) (String.length l - i - 2)) in
  int_of_string (List.nth f 7)

let () =
  let n = int_of_string Sys.argv.(1) in
  Ocgc_test.pid ();
  Memprof_funs.alloc_a n;
  Memprof_funs.alloc_b n;
  Ocgc_test.keep (Memprof_funs.retain 1000);
  Gc.full_major ();
  let t0 = Unix.gettimeofday () in
  match Unix.fork () with
  | 0 ->
      Gc.minor ();
      let t1 = Unix.gettimeofday () in
      let f1 = minflt () in
      Printf.printf "child.pid %d\nchild.faults %d\nchild.us %d\n%!" (Unix.getpid ()) f1
        (int_of_float ((t1 -. t0) *. 1e6));
      exit 0
  | child -> ignore (Unix.waitpid [] child)
