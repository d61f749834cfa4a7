(* cycles_live.ml - runs a dozen major cycles that the GC ends by itself
   (no Gc call: they end inside ordinary major slices), on a heap that does
   not grow after the first rounds, then prints "pid N" and
   "before.major_collections N", sleeps until file ARGV.(1) exists (a
   reader looks at its ring meanwhile), and prints
   "after.major_collections N". *)
let () =
  let window = Array.make 4096 [] in
  let i = ref 0 in
  let cycles () = (Gc.quick_stat ()).Gc.major_collections in
  let start = cycles () in
  while cycles () - start < 12 do
    for _ = 1 to 10_000 do
      incr i;
      (* promoted, then dropped when the slot is reused *)
      window.(!i land 4095) <- [ !i; !i + 1 ]
    done
  done;
  Printf.printf "pid %d\nbefore.major_collections %d\n%!" (Unix.getpid ()) (cycles ());
  Ocgc_test.wait_for Sys.argv.(1);
  Printf.printf "after.major_collections %d\n%!" (cycles ());
  Ocgc_test.keep window
