(* threads.ml - systhreads: four threads allocate (short- and long-lived
   data) and yield to each other while the tick thread preempts them; the
   main thread joins them and prints its Gc.quick_stat, which counts every
   thread's collections. *)
let worker id =
  let keep = ref [] in
  for i = 1 to 300_000 do
    keep := (id, i) :: !keep;
    if i mod 50_000 = 0 then begin keep := []; Thread.yield () end
  done;
  Ocgc_test.keep !keep

let () =
  let ts = List.init 4 (fun id -> Thread.create worker id) in
  List.iter Thread.join ts;
  Gc.full_major ();
  Ocgc_test.report ()
