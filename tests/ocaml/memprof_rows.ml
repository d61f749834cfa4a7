(* memprof_rows.ml - more call stacks than the allocation profile's table
   has rows, then new ones once the old have gone quiet, for row
   recycling: leaf allocates 9 words, reached through four levels of ten
   call sites each (l1 .. l4, each arm a distinct return address), so
   each K in 0 .. 9999 is a stack of its own.  Phase 1 allocates from
   all 10,000 stacks through one call site of main (more than the table's
   8,191 rows), makes a full major (every sampled block found dead),
   prints "phase.1 1" and waits for STEP; phase 2, through another call
   site of main, allocates from 1,000 stacks the table has never seen,
   then prints "phase.2 1" and waits for STOP.
   Usage: memprof_rows STEP STOP *)

let[@inline never] leaf x = Sys.opaque_identity (Array.make 8 x)

let[@inline never] l4 k x =
  let r =
    match k mod 10 with
    | 0 -> leaf (x + 0) | 1 -> leaf (x + 1) | 2 -> leaf (x + 2) | 3 -> leaf (x + 3)
    | 4 -> leaf (x + 4) | 5 -> leaf (x + 5) | 6 -> leaf (x + 6) | 7 -> leaf (x + 7)
    | 8 -> leaf (x + 8) | _ -> leaf (x + 9)
  in
  Sys.opaque_identity r

let[@inline never] l3 k x =
  let r =
    match k / 10 mod 10 with
    | 0 -> l4 k (x + 0) | 1 -> l4 k (x + 1) | 2 -> l4 k (x + 2) | 3 -> l4 k (x + 3)
    | 4 -> l4 k (x + 4) | 5 -> l4 k (x + 5) | 6 -> l4 k (x + 6) | 7 -> l4 k (x + 7)
    | 8 -> l4 k (x + 8) | _ -> l4 k (x + 9)
  in
  Sys.opaque_identity r

let[@inline never] l2 k x =
  let r =
    match k / 100 mod 10 with
    | 0 -> l3 k (x + 0) | 1 -> l3 k (x + 1) | 2 -> l3 k (x + 2) | 3 -> l3 k (x + 3)
    | 4 -> l3 k (x + 4) | 5 -> l3 k (x + 5) | 6 -> l3 k (x + 6) | 7 -> l3 k (x + 7)
    | 8 -> l3 k (x + 8) | _ -> l3 k (x + 9)
  in
  Sys.opaque_identity r

let[@inline never] l1 k x =
  let r =
    match k / 1000 mod 10 with
    | 0 -> l2 k (x + 0) | 1 -> l2 k (x + 1) | 2 -> l2 k (x + 2) | 3 -> l2 k (x + 3)
    | 4 -> l2 k (x + 4) | 5 -> l2 k (x + 5) | 6 -> l2 k (x + 6) | 7 -> l2 k (x + 7)
    | 8 -> l2 k (x + 8) | _ -> l2 k (x + 9)
  in
  Sys.opaque_identity r

let () =
  Ocgc_test.pid ();
  for _ = 1 to 3 do
    for k = 0 to 9999 do ignore (Sys.opaque_identity (l1 k 0)) done
  done;
  Gc.full_major ();
  print_endline "phase.1 1";
  Ocgc_test.wait_for Sys.argv.(1);
  for _ = 1 to 3 do
    for k = 0 to 999 do ignore (Sys.opaque_identity (l1 k 1)) done
  done;
  Gc.full_major ();
  print_endline "phase.2 1";
  Ocgc_test.wait_for Sys.argv.(2)
