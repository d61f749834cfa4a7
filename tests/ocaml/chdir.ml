(* chdir.ml - collects, prints "pid N", changes its working directory to
   argv.(1), collects again and exits: the ring folder, when it was given
   as a relative path, must still be the one the ring was made in. *)
let () =
  Ocgc_test.keep (List.init 100_000 (fun i -> i));
  Gc.full_major ();
  Printf.printf "pid %d\n%!" (Unix.getpid ());
  Sys.chdir Sys.argv.(1);
  Ocgc_test.keep (List.init 100_000 (fun i -> i + 1));
  Gc.full_major ();
  Ocgc_test.report ~pid_key:"pid_again" ()
