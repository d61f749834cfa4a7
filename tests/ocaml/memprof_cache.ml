(* memprof_cache.ml - a bounded cache of known live size, for the in-use
   rule of ocgc's allocation profile: a Hashtbl of ENTRIES entries, each
   made by Memprof_funs.cache_entry (31 words), replaced continuously in
   turn, so the cache's size never changes while its old entries become
   garbage at the rate it runs.  After every CYCLES completed major cycles
   (moments chosen by the program's own progress, not by time) it prints
   "moment.I WORDS", WORDS the words its entries hold
   (Obj.reachable_words, summed), and waits for the file PREFIX.I; after
   MOMENTS moments it prints where its executable is mapped and exits.
   Usage: memprof_cache ENTRIES CYCLES MOMENTS PREFIX *)

let () =
  let entries = int_of_string Sys.argv.(1) and cycles = int_of_string Sys.argv.(2) in
  let moments = int_of_string Sys.argv.(3) and prefix = Sys.argv.(4) in
  Ocgc_test.pid ();
  Printf.printf "exe_base %s\n%!" (Memprof_funs.exe_base ());
  let tbl = Hashtbl.create entries in
  for i = 0 to entries - 1 do Hashtbl.replace tbl i (Memprof_funs.cache_entry i) done;
  let majors () = (Gc.quick_stat ()).Gc.major_collections in
  let i = ref entries in
  for m = 1 to moments do
    let until = majors () + cycles in
    while majors () < until do
      for _ = 1 to 1000 do
        Hashtbl.replace tbl (!i mod entries) (Memprof_funs.cache_entry !i);
        incr i
      done
    done;
    let words = Hashtbl.fold (fun _ v acc -> acc + Obj.reachable_words (Obj.repr v)) tbl 0 in
    Printf.printf "moment.%d %d\n%!" m words;
    Ocgc_test.wait_for (Printf.sprintf "%s.%d" prefix m)
  done
