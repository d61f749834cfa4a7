(* memprof_funs.ml - the known allocations of the memprof_*.ml programs:
   alloc_a, alloc_b and alloc_c make N tuples of 10 fields each (11 words,
   allocated inline from OCaml) that die at once, from three functions the
   tests find by name (camlMemprof_funs__alloc_a_...); retain makes K
   arrays of 100 fields (101 words, allocated by C, caml_make_vect) in a
   list (3 words a cell) that the caller keeps; cache_entry makes one
   entry of memprof_cache.ml's cache; exe_base says where the
   executable is mapped, to name return addresses with nm. *)

let[@inline never] alloc_a n = for i = 1 to n do ignore (Sys.opaque_identity (i, i, i, i, i, i, i, i, i, i)) done
let[@inline never] alloc_b n = for i = 1 to n do ignore (Sys.opaque_identity (i, i, i, i, i, i, i, i, i, i)) done
let[@inline never] alloc_c n = for i = 1 to n do ignore (Sys.opaque_identity (i, i, i, i, i, i, i, i, i, i)) done

let[@inline never] retain k =
  let l = ref [] in
  for i = 1 to k do l := Array.make 100 i :: !l done;
  !l

(* The start of the executable's mapping at offset 0, from /proc/self/maps. *)
let exe_base () =
  let exe = Unix.readlink "/proc/self/exe" in
  let ic = open_in "/proc/self/maps" in
  let rec find () =
    match input_line ic with
    | exception End_of_file -> "0"
    | line -> (
        match String.split_on_char ' ' line |> List.filter (( <> ) "") with
        | range :: _ :: "00000000" :: _ :: _ :: path :: _ when path = exe ->
            List.hd (String.split_on_char '-' range)
        | _ -> find ())
  in
  let b = find () in
  close_in ic;
  b

(* An entry of memprof_cache.ml's cache: 30 fields (31 words, by C). *)
let[@inline never] cache_entry i = Array.make 30 i
