(* top_alloc.ml - a program whose allocations come from one known function
   (Memprof_funs.alloc_c), all the time, for `ocgc top`'s panel of the top
   allocating functions: it prints its pid and allocates until STOP exists.
   Usage: top_alloc STOP *)

let () =
  let stop = Sys.argv.(1) in
  Printf.printf "pid %d\n%!" (Unix.getpid ());
  while not (Sys.file_exists stop) do
    Memprof_funs.alloc_c 20000;
    Unix.sleepf 0.002
  done
