(* memprof_render.ml - a threaded service of recursive renderers, for the
   size of ocgc's allocation profile table: THREADS systhreads each render
   DOCS random documents (trees of 3,000 nodes at most, up to 40 levels
   deep, most nodes with a few children, some with up to 120) to HTML, recursively, with the
   standard library's non-tail-recursive List.map over every node's
   children, so that the stacks the sampler sees are hundreds of frames
   deep and change with each document's shape.  A fixed amount of work,
   whatever the machine's speed; it prints "rendered BYTES" at the end.
   Usage: memprof_render THREADS DOCS SEED *)

type doc = Text of string | Node of string * doc list

let tags = [| "div"; "p"; "span"; "ul"; "li"; "section"; "em" |]

(* At most [budget] nodes, depth first: the first branches go deep. *)
let rec gen st budget depth =
  decr budget;
  if depth = 0 || !budget <= 0 || Random.State.int st 8 = 0 then
    Text (String.make (1 + Random.State.int st 20) 'x')
  else
    let width = if Random.State.int st 10 = 0 then 1 + Random.State.int st 120 else 1 + Random.State.int st 4 in
    Node (tags.(Random.State.int st (Array.length tags)), List.init width (fun _ -> gen st budget (depth - 1)))

(* Mutual recursion: a node renders its children, each child a node. *)
let rec render = function
  | Text s -> escape s
  | Node (tag, children) -> "<" ^ tag ^ ">" ^ render_children children ^ "</" ^ tag ^ ">"

and render_children children = String.concat "" (List.map render children)

and escape s = String.map (fun c -> if c = '<' then '_' else c) s

let () =
  let threads = int_of_string Sys.argv.(1) and docs = int_of_string Sys.argv.(2) in
  let seed = int_of_string Sys.argv.(3) in
  Ocgc_test.pid ();
  let total = Atomic.make 0 in
  let work t () =
    let st = Random.State.make [| seed; t |] in
    for _ = 1 to docs do
      let d = gen st (ref 3000) 40 in
      let s = render d in
      ignore (Atomic.fetch_and_add total (String.length s))
    done
  in
  let ts = List.init threads (fun t -> Thread.create (work t) ()) in
  List.iter Thread.join ts;
  Printf.printf "exe_base %s\nrendered %d\n%!" (Memprof_funs.exe_base ()) (Atomic.get total)
