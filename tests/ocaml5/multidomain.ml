(* multidomain.ml - a stock OCaml 5 program with two domains, one of
   them forking, for tests/ocaml5/ocaml5_live.sh.

   multidomain DIR ROUNDS: the main domain forks first (OCaml 5 forks only
   while one domain runs); parent and child then each, in DIR:
     ROLE.pid      its pid (ROLE: parent or child), once its ring exists;
     waits for ROLE.go (the test's readers have attached), then
     Gc.quick_stat, a second domain and the main one allocate (lists kept
     alive a while, so minors promote and major cycles run), Gc.full_major,
     Gc.compact, and two domains again (see work); Gc.quick_stat again;
     ROLE.stat     the differences, "key value" lines (written whole:
                   a temporary renamed);
     waits for ROLE.exit, and exits.
   multidomain DIR 0: after ROLE.pid, two domains churn until ROLE.exit. *)

let dir = Sys.argv.(1)
let rounds = int_of_string Sys.argv.(2)

let write_file name text =
  let tmp = Filename.concat dir ("." ^ name ^ ".tmp") in
  let oc = open_out tmp in
  output_string oc text;
  close_out oc;
  Sys.rename tmp (Filename.concat dir name)

(* The test's files are the handshake: wait for one to appear. *)
let rec wait_for name =
  if not (Sys.file_exists (Filename.concat dir name)) then begin
    Unix.sleepf 0.005;
    wait_for name
  end

let churn n =
  let keep = ref [] in
  for i = 1 to n do
    let l = List.init 50 (fun j -> i + j) in
    if i mod 64 = 0 then keep := l :: !keep;
    if i mod 20000 = 0 then keep := []
  done;
  List.length !keep

(* Two domains churn; Gc.full_major and Gc.compact run with one (with two,
   OCaml 5.3's finish of a cycle writes tens of thousands of major slices
   in a burst, more than a ring of e=20 holds); a second domain churns
   again (its ring is the first one's, reused). *)
let work () =
  let d = Domain.spawn (fun () -> churn (rounds * 3 / 2)) in
  let a = churn rounds in
  let c = Domain.join d in
  Gc.full_major ();
  Gc.compact ();
  let d = Domain.spawn (fun () -> churn (rounds / 2)) in
  let b = churn (rounds / 2) in
  a + b + c + Domain.join d

(* ROUNDS 0: churn on two domains until ROLE.exit, for a window of known
   length (ocgc report --duration). *)
let churn_until role =
  let stop = Atomic.make false in
  let d = Domain.spawn (fun () -> while not (Atomic.get stop) do ignore (churn 1000) done) in
  while not (Sys.file_exists (Filename.concat dir (role ^ ".exit"))) do ignore (churn 10000) done;
  Atomic.set stop true;
  Domain.join d;
  if role = "parent" then ignore (Unix.wait ());
  exit 0

let () =
  let role = match Unix.fork () with 0 -> "child" | _ -> "parent" in
  write_file (role ^ ".pid") (string_of_int (Unix.getpid ()) ^ "\n");
  if rounds = 0 then churn_until role;
  wait_for (role ^ ".go");
  let q0 = Gc.quick_stat () in
  let kept = work () in
  let q1 = Gc.quick_stat () in
  let d f = f q1 - f q0 in
  write_file (role ^ ".stat")
    (Printf.sprintf
       "minor_collections %d\nmajor_collections %d\ncompactions %d\n\
        forced_major_collections %d\nminor_collections_total %d\nkept %d\n"
       (d (fun q -> q.Gc.minor_collections)) (d (fun q -> q.Gc.major_collections))
       (d (fun q -> q.Gc.compactions)) (d (fun q -> q.Gc.forced_major_collections))
       q1.Gc.minor_collections kept);
  wait_for (role ^ ".exit");
  if role = "parent" then ignore (Unix.wait ())
