(* slicework.ml - a stock OCaml 5 program whose major slices have each
   reason to work, for tests/ocaml5/ocaml5_slicework.sh.

   slicework DIR: allocation (lists kept alive a while, so minors promote
   and the major GC is asked for work), extra resources (Bigarrays of a
   MiB, whose custom blocks speed the GC up), explicit budgets
   (Gc.major_slice n), a full major; then DIR/done, and it waits for
   DIR/exit without allocating, so that its ring holds all it wrote. *)

let dir = Sys.argv.(1)

let touch name = close_out (open_out (Filename.concat dir name))

let rec wait_for name =
  if not (Sys.file_exists (Filename.concat dir name)) then begin
    Unix.sleepf 0.01;
    wait_for name
  end

let () =
  let keep = ref [] in
  for i = 1 to 300_000 do
    let l = List.init 20 (fun j -> i + j) in
    if i mod 16 = 0 then keep := l :: !keep;
    if i mod 30_000 = 0 then keep := []
  done;
  for _ = 1 to 300 do
    ignore (Sys.opaque_identity
              (Bigarray.Array1.create Bigarray.char Bigarray.c_layout (1 lsl 20)))
  done;
  for _ = 1 to 5 do ignore (Gc.major_slice 20_000) done;
  Gc.full_major ();
  touch "done";
  wait_for "exit"
