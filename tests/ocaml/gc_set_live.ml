(* gc_set_live.ml - Gc.set while a reader watches.  It allocates and
   collects, then (1) sets space_overhead to 200, which runs no collection,
   and (2) sets minor_heap_size to 65536 words, which runs one (before the
   resize).  After each it prints "N.space_overhead", "N.minor_heap_size"
   (Gc.get) and "N.minor_collections", "N.major_collections" (Gc.quick_stat),
   and waits for the file WORK/gcset.goN, neither allocating nor collecting
   meanwhile.  Prints "pid" first.  Usage: gc_set_live WORK *)
let show n =
  let c = Gc.get () and s = Gc.quick_stat () in
  Printf.printf "%d.space_overhead %d\n%d.minor_heap_size %d\n" n c.Gc.space_overhead n
    c.Gc.minor_heap_size;
  Printf.printf "%d.minor_collections %d\n%d.major_collections %d\n%!" n
    s.Gc.minor_collections n s.Gc.major_collections

let () =
  let work = Sys.argv.(1) in
  Ocgc_test.pid ();
  Ocgc_test.keep (List.init 100_000 (fun i -> i));
  Gc.full_major ();
  Gc.set { (Gc.get ()) with Gc.space_overhead = 200 };
  show 1;
  Ocgc_test.wait_for (Filename.concat work "gcset.go1");
  Gc.set { (Gc.get ()) with Gc.minor_heap_size = 65536 };
  show 2;
  Ocgc_test.wait_for (Filename.concat work "gcset.go2")
