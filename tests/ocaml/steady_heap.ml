(* steady_heap.ml - a program whose major heap no longer changes while a
   test attaches (html_chromium.sh): it builds a live structure, settles
   its heap (two full majors), then for SECONDS seconds allocates only
   short-lived garbage (minor collections and major slices, nothing that
   outlives a minor collection, so the heap neither grows nor shrinks).
   It prints "pid N" at once and "steady 1" after half a second of that,
   when the heap's last change is behind it.  Usage: steady_heap SECONDS *)

let () =
  let secs = float_of_string Sys.argv.(1) in
  Ocgc_test.pid ();
  let live = Array.init 200_000 (fun i -> (i, string_of_int i)) in
  Ocgc_test.keep live;
  Gc.full_major ();
  Gc.full_major ();
  let t0 = Unix.gettimeofday () and said = ref false and sum = ref 0 in
  while Unix.gettimeofday () -. t0 < secs do
    for i = 1 to 10_000 do
      let l = [ i; i + 1; i + 2 ] in
      sum := !sum + List.length l
    done;
    if (not !said) && Unix.gettimeofday () -. t0 > 0.5 then begin
      print_string "steady 1\n";
      flush stdout;
      said := true
    end
  done;
  Printf.printf "sum %d\n" !sum
