(* gc_charge.ml - two allocation sites for `ocgc profile --gc-cpu`
   (profile_gc_cpu.sh): [young] allocates small lists that die at once
   (they fill the minor heap, and nothing of them survives a minor
   collection), [old] allocates about as many bytes in small arrays kept
   in a table of 65,536 (each survives its minor collection: promoted, so
   the major collector marks and sweeps them).  By the model
   (ocgc/gccharge.h) [young] is charged minor-collection CPU only, [old]
   minor and major.  It prints "pid N" and runs until STOPFILE exists (at
   most about 120 s).  Usage: gc_charge STOPFILE *)

let table = Array.make 65536 [||]

let[@inline never] young n =
  let s = ref 0 in
  for i = 1 to n do
    let l = [ i; i + 1; i + 2 ] in
    s := !s + List.length l
  done;
  !s

let[@inline never] old n =
  for i = 1 to n do
    table.((i * 7919) land 65535) <- Array.make 3 i;
    table.((i * 104729) land 65535) <- Array.make 3 (i + 1)
  done

let () =
  let stop = Sys.argv.(1) in
  Ocgc_test.pid ();
  let t0 = Unix.gettimeofday () and sum = ref 0 and n = ref 0 in
  while (!n land 15 <> 0 || not (Sys.file_exists stop)) && Unix.gettimeofday () -. t0 < 120. do
    sum := !sum + young 10_000;
    old 10_000;
    incr n
  done;
  Printf.printf "rounds %d\nsum %d\n%!" !n !sum
