(* layout.ml - prints where the program's memory is: the addresses of
 * blocks in the major heap's first chunks, then its /proc/self/maps, with
 * a thread alive (its stack is a mapping too) and the heap grown.
 * layout.sh runs it with the ring off and on, address randomisation off,
 * and compares.  Output: "chunk.I ADDRESS" lines, then "map LINE" lines. *)

let () =
  let keep = ref [] in
  (* 800 KB each: outside the minor heap, so each lands in the major heap
     as it grows chunk by chunk. *)
  for i = 1 to 40 do
    keep := Array.make 100_000 i :: !keep
  done;
  (* The thread has started (and made whatever its start makes, such as
     malloc's arena for it) before the maps are read; then it waits. *)
  let m = Mutex.create () and started = ref false in
  let c = Condition.create () and sm = Mutex.create () in
  Mutex.lock m;
  let t =
    Thread.create
      (fun () ->
        Mutex.lock sm;
        started := true;
        Condition.signal c;
        Mutex.unlock sm;
        Mutex.lock m;
        Mutex.unlock m)
      ()
  in
  Mutex.lock sm;
  while not !started do Condition.wait c sm done;
  Mutex.unlock sm;
  List.iteri
    (fun i a -> Printf.printf "chunk.%d %d\n" i (2 * (Obj.magic a : int)))
    (List.rev !keep);
  let ic = open_in "/proc/self/maps" in
  (try
     while true do
       print_string "map ";
       print_endline (input_line ic)
     done
   with End_of_file -> ());
  close_in ic;
  Mutex.unlock m;
  Thread.join t;
  ignore (Sys.opaque_identity !keep)
