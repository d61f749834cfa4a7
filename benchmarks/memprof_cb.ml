(* memprof_cb.ml - linked first into the allocation-sampling benchmark's
   programs (benchmarks/memprof.sh): with BENCH_GC_MEMPROF=BYTES in the
   environment, the program runs its own Gc.Memprof at one sample per BYTES
   on average, with OCaml callbacks that keep each sampled block's call
   stack until it dies, as memtrace does; without it, nothing. *)

let live = Hashtbl.create 1024
let next = ref 0

let () =
  match Sys.getenv_opt "BENCH_GC_MEMPROF" with
  | None -> ()
  | Some bytes ->
      let rate = 8. /. float_of_string bytes in
      let alloc (i : Gc.Memprof.allocation) =
        incr next;
        Hashtbl.replace live !next i.Gc.Memprof.callstack;
        Some !next
      in
      let dealloc id = Hashtbl.remove live id in
      Gc.Memprof.start ~sampling_rate:rate ~callstack_size:32
        {
          Gc.Memprof.alloc_minor = alloc;
          alloc_major = alloc;
          promote = (fun id -> Some id);
          dealloc_minor = dealloc;
          dealloc_major = dealloc;
        }
