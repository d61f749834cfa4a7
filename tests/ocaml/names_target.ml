(* names_target.ml - a program whose allocations come from functions that
   symbols alone do not tell apart, for the names of `ocgc report`
   (report_names.sh): Memprof_funs.alloc_c (a named function), an
   anonymous function given to List.iter (the line marked ANON below, which
   the test finds with grep), and List.filter, whose cons cells are made by
   List.find_all's local function "find" (a name the top-level List.find
   shares); and an anonymous function that begins with code inlined from
   Names_inline (the line marked INLINED).  It prints its pid and
   allocates until STOP exists.
   Usage: names_target STOP *)

let sink = ref []

let[@inline never] anon l =
  List.iter (fun x -> sink := Sys.opaque_identity (x, x, x, x, x) :: !sink) l (* ANON *)

let pairs = ref []

(* An anonymous function whose first code is Names_inline.pair's, inlined:
   its entry address has a row of this line, then one of names_inline.ml. *)
let[@inline never] inlined l =
  List.iter (fun x -> pairs := Names_inline.pair x :: !pairs) l (* INLINED *)

let () =
  let stop = Sys.argv.(1) in
  let l = List.init 2000 (fun i -> i) in
  Printf.printf "pid %d\n%!" (Unix.getpid ());
  while not (Sys.file_exists stop) do
    Memprof_funs.alloc_c 5000;
    sink := [];
    anon l;
    pairs := [];
    inlined l;
    for _ = 1 to 5 do ignore (Sys.opaque_identity (List.filter (fun x -> x land 1 = 0) l)) done;
    Unix.sleepf 0.002
  done
