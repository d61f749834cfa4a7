(* rt_consumer.ml - a consumer built with stock OCaml 5 (its own
   Runtime_events library, nothing of ocgc) that reads the ring of process
   PID in folder DIR to its end and prints what it saw as "key value" lines
   (tests/ocaml5/ocaml5_consumer.sh compares them with the producer's
   Gc.quick_stat and with `ocgc dump`):
     phase.NAME.begin / .end      runtime phase events, by OCaml 5's names
     phase.NAME.spans / .mean_ns / .max_ns
                                  each begin paired with the next end of
                                  its phase (as `ocgc dump` pairs them)
     counter.NAME.count / .sum    runtime counters
     lifecycle.NAME               lifecycle events
     user.NAME.count / .sum / .last
                                  user events (int ones: their values'
                                  sum and the last one)
     events.lost                  what the lost_events callback reported
     minor_collections            the MINOR spans
     major_collections            the ocgc.major_cycle.end user events
   Phase and counter names are those of the numbering this OCaml was built
   with, which is the point: a ring in another numbering reads wrong.
   Usage: rt_consumer DIR PID *)

let counts : (string, int) Hashtbl.t = Hashtbl.create 64

let add k n = Hashtbl.replace counts k (n + Option.value ~default:0 (Hashtbl.find_opt counts k))
let set k n = Hashtbl.replace counts k n
let get k = Option.value ~default:0 (Hashtbl.find_opt counts k)

(* Open spans: (domain, phase name) -> begin time (4.x phases of one name
   never nest). *)
let open_spans : (int * string, int) Hashtbl.t = Hashtbl.create 16

let span_end dom ts name =
  match Hashtbl.find_opt open_spans (dom, name) with
  | None -> ()
  | Some t0 ->
    Hashtbl.remove open_spans (dom, name);
    let d = ts - t0 and k = "phase." ^ name in
    add (k ^ ".spans") 1;
    add (k ^ ".sum_ns") d;
    set (k ^ ".max_ns") (max d (get (k ^ ".max_ns")))

(* phase.NAME.sum_ns becomes phase.NAME.mean_ns, rounded down as by ocgc dump *)
let finish_means () =
  let suffix = ".sum_ns" in
  Hashtbl.fold (fun k v acc -> if String.ends_with ~suffix k then (k, v) :: acc else acc) counts []
  |> List.iter (fun (k, v) ->
         Hashtbl.remove counts k;
         let p = String.sub k 0 (String.length k - String.length suffix) in
         set (p ^ ".mean_ns") (v / get (p ^ ".spans")))

let phase edge dom ts p =
  let name = Runtime_events.runtime_phase_name p in
  let ts = Int64.to_int (Runtime_events.Timestamp.to_int64 ts) in
  add ("phase." ^ name ^ edge) 1;
  if edge = ".begin" then Hashtbl.replace open_spans (dom, name) ts else span_end dom ts name

let counter _dom _ts c v =
  let k = "counter." ^ Runtime_events.runtime_counter_name c in
  add (k ^ ".count") 1;
  add (k ^ ".sum") v

let lifecycle _dom _ts l _data = add ("lifecycle." ^ Runtime_events.lifecycle_name l) 1

let user_unit _dom _ts ev () =
  let k = "user." ^ Runtime_events.User.name ev in
  add (k ^ ".count") 1;
  add (k ^ ".sum") 0

let user_int _dom _ts ev v =
  let k = "user." ^ Runtime_events.User.name ev in
  add (k ^ ".count") 1;
  add (k ^ ".sum") v;
  set (k ^ ".last") v

let callbacks () =
  Runtime_events.Callbacks.create ~runtime_begin:(phase ".begin") ~runtime_end:(phase ".end")
    ~runtime_counter:counter ~lifecycle
    ~lost_events:(fun _dom n -> add "events.lost" n)
    ()
  |> Runtime_events.Callbacks.add_user_event Runtime_events.Type.unit user_unit
  |> Runtime_events.Callbacks.add_user_event Runtime_events.Type.int user_int

let () =
  if Array.length Sys.argv <> 3 then (prerr_endline "usage: rt_consumer DIR PID"; exit 2);
  let cursor = Runtime_events.create_cursor (Some (Sys.argv.(1), int_of_string Sys.argv.(2))) in
  let cb = callbacks () in
  (* The producer has exited: read until nothing is left. *)
  while Runtime_events.read_poll cursor cb None > 0 do () done;
  Runtime_events.free_cursor cursor;
  set "events.lost" (get "events.lost");
  finish_means ();
  set "minor_collections" (get "phase.minor.begin");
  set "major_collections" (get "user.ocgc.major_cycle.end.count");
  Printf.printf "ocaml %s\n" Sys.ocaml_version;
  Hashtbl.fold (fun k v acc -> (k, v) :: acc) counts []
  |> List.sort compare
  |> List.iter (fun (k, v) -> Printf.printf "%s %d\n" k v)
