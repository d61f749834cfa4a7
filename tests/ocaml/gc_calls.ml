(* gc_calls.ml - every Gc.* call that writes a span, made a known number of
   times by two threads.  Before each call the caller leaves dead values
   with finalisers that yield the runtime lock, so finalisers run in the
   calls' pending actions (between the two rounds of Gc.full_major and
   Gc.compact too) and the other thread makes its own calls meanwhile.
   Last, unless OOM is "none", one Gc.set asks for the largest minor heap
   (2 GiB), which raises Out_of_memory under the address-space limit the
   test sets.  Prints "calls.explicit_gc_NAME N" per span name,
   "finalised N", "oom raised|not_raised|none", and the report.
   Usage: gc_calls ROUNDS OOM *)

let rounds = int_of_string Sys.argv.(1)
let oom = Sys.argv.(2)
let finalised = ref 0

let names = [| "minor"; "major"; "full_major"; "compact"; "major_slice"; "stat"; "set" |]
let calls = Array.make (Array.length names) 0

(* Out of line, so that nothing on the caller's stack keeps the values. *)
let[@inline never] garbage_with_finalisers () =
  for i = 1 to 4 do
    let v = Array.make (8 + i) i in
    Gc.finalise (fun _ -> incr finalised; Thread.yield ()) v
  done

let call k =
  garbage_with_finalisers ();
  (match k with
   | 0 -> Gc.minor ()
   | 1 -> Gc.major ()
   | 2 -> Gc.full_major ()
   | 3 -> Gc.compact ()
   | 4 -> ignore (Sys.opaque_identity (Gc.major_slice 0))
   | 5 -> ignore (Sys.opaque_identity (Gc.stat ()))
   | _ -> Gc.set { (Gc.get ()) with Gc.space_overhead = 80 + (calls.(k) mod 10) });
  calls.(k) <- calls.(k) + 1

let work () =
  for r = 1 to rounds do
    for k = 0 to Array.length names - 1 do call ((k + r) mod Array.length names) done
  done

let () =
  let t = Thread.create work () in
  work ();
  Thread.join t;
  let result =
    if oom = "none" then "none"
    else
      try
        Gc.set { (Gc.get ()) with Gc.minor_heap_size = 1 lsl 28 };
        calls.(6) <- calls.(6) + 1;
        "not_raised"
      with Out_of_memory -> calls.(6) <- calls.(6) + 1; "raised"
  in
  Gc.full_major ();
  calls.(2) <- calls.(2) + 1;
  Array.iteri (fun k n -> Printf.printf "calls.explicit_gc_%s %d\n" n calls.(k)) names;
  Printf.printf "finalised %d\noom %s\n" !finalised result;
  Ocgc_test.report () (* and its own Gc.minor *)
