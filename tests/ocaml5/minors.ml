(* minors.ml - a stock OCaml 5 program of one domain for
   tests/ocaml5/ocaml5_live.sh: it allocates (lists kept alive a while, so
   that minor collections promote), then prints its Gc.quick_stat's
   minor_collections as "minor_collections N" and exits.  Run with
   OCAML_RUNTIME_EVENTS_PRESERVE=1 its ring stays, for ocgc report --file.

   minors DIR ROUNDS *)

let () =
  let rounds = int_of_string Sys.argv.(2) in
  let keep = ref [] in
  for i = 1 to rounds do
    let l = List.init 50 (fun j -> i + j) in
    if i mod 64 = 0 then keep := l :: !keep;
    if i mod 20000 = 0 then keep := []
  done;
  let q = Gc.quick_stat () in
  Printf.printf "kept %d\nminor_collections %d\n" (List.length !keep) q.Gc.minor_collections
