(* reserve.ml - how much contiguous address space the program could still
   reserve (reserve_stubs.c), once its runtime has made what it makes at
   start (the heap, the minor heap and, on the patched runtime, the ring):
   "reserve BYTES", then its /proc/self/maps as "map LINE" lines, from
   which reserve.sh takes the ring's own size. *)

external largest_reservation : unit -> int64 = "ocgc_test_largest_reservation"

let () =
  let r = largest_reservation () in
  Printf.printf "reserve %Ld\n" r;
  let ic = open_in "/proc/self/maps" in
  (try
     while true do
       print_string "map ";
       print_endline (input_line ic)
     done
   with End_of_file -> ());
  close_in ic
