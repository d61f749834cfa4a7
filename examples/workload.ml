(* workload.ml - the bundled demo: a service-like OCaml program with a
   steady GC load.  Short-lived request data, a medium-lived cache that
   keeps being replaced (promotion and major work), a large buffer now and
   then (direct major allocation), and an explicit Gc.full_major every few
   seconds, like a periodic maintenance task.

   usage: workload [SECONDS [STOPFILE]]   (default 10; 0 = run until
   killed; it also stops, and says what it served, once STOPFILE exists) *)

type entry = { key : string; payload : float array; mutable hits : int }

let () =
  let seconds = try float_of_string Sys.argv.(1) with _ -> 10.0 in
  let stop = if Array.length Sys.argv > 2 then Some Sys.argv.(2) else None in
  let stopped () = match stop with Some f -> Sys.file_exists f | None -> false in
  let t0 = Unix.gettimeofday () in
  let cache = Array.make 4096 None in
  let served = ref 0 and last_full = ref t0 in
  while (seconds = 0.0 || Unix.gettimeofday () -. t0 < seconds) && not (stopped ()) do
    for i = 1 to 2000 do
      (* a "request": parse, build a response, drop it *)
      let words = List.init 20 (fun k -> string_of_int (i * k)) in
      let response = String.concat "," words in
      served := !served + String.length response;
      (* cache churn: medium-lived entries *)
      let slot = (i * 7919 + !served) land 4095 in
      (match cache.(slot) with
       | Some e when e.key = response -> e.hits <- e.hits + 1
       | _ -> cache.(slot) <- Some { key = response; payload = Array.make 32 (float i); hits = 0 })
    done;
    if !served land 0xff = 0 then ignore (Sys.opaque_identity (Bytes.create 65536));
    let now = Unix.gettimeofday () in
    if now -. !last_full > 3.0 then begin Gc.full_major (); last_full := now end
  done;
  let s = Gc.quick_stat () in
  Printf.printf "served=%d minor_collections=%d major_collections=%d\n" !served
    s.Gc.minor_collections s.Gc.major_collections
