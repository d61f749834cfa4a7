(* memuse.ml - linked into the allocation-sampling benchmark's programs
   (benchmarks/memprof.sh): with BENCH_SMAPS=FILE in the environment, the
   program writes into FILE at exit, while ocgc's tables are still mapped,
   its /proc/self/smaps_rollup's Rss, Pss and Private_Dirty lines and
   "Ring_Rss: N kB", the resident part of its ring file's mapping (the
   one whose name ends in .events, or .events (deleted) for a memfd: the
   shared allocation table is in it).
   The bench subtracts sampling off's figures from sampling on's.  Without
   BENCH_SMAPS, nothing. *)

let starts_with p l = String.length l >= String.length p && String.sub l 0 (String.length p) = p
let ends_with s l = String.length l >= String.length s && String.sub l (String.length l - String.length s) (String.length s) = s

let lines file =
  match open_in file with
  | exception Sys_error _ -> []
  | ic ->
      let rec go acc = match input_line ic with l -> go (l :: acc) | exception End_of_file -> close_in ic; List.rev acc in
      go []

let write file =
  let oc = open_out file in
  List.iter
    (fun l -> if List.exists (fun k -> starts_with k l) [ "Rss:"; "Pss:"; "Private_Dirty:" ] then output_string oc (l ^ "\n"))
    (lines "/proc/self/smaps_rollup");
  (* in /proc/self/smaps, a mapping's first line has a '-' in its first
     word and its name last; its Rss line follows *)
  let ring = ref false and kb = ref 0 in
  List.iter
    (fun l ->
      match String.split_on_char ' ' l |> List.filter (( <> ) "") with
      | first :: _ when String.contains first '-' && not (ends_with ":" first) ->
          ring := ends_with ".events" l || ends_with ".events (deleted)" l
      | [ "Rss:"; n; "kB" ] when !ring -> kb := !kb + int_of_string n
      | _ -> ())
    (lines "/proc/self/smaps");
  Printf.fprintf oc "Ring_Rss: %d kB\n" !kb;
  close_out oc

let () = match Sys.getenv_opt "BENCH_SMAPS" with None -> () | Some f -> at_exit (fun () -> write f)
