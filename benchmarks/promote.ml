(* promote.ml - promotion-heavy workload: medium-lived data.
 *
 * A window of 256 Ki slots holds small lists; each step replaces a
 * pseudo-random slot.  A list lives about 256 Ki steps (3 Mi words of
 * allocation), far longer than one minor heap, so nearly everything is
 * promoted and then dies in the major heap: lots of marking and sweeping,
 * and a write barrier (caml_modify) on every step.  Usage: promote STEPS *)

let window_size = 1 lsl 18

let () =
  let n = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 1_000_000 in
  let window = Array.make window_size [] in
  let seed = ref 12345 and acc = ref 0 in
  for i = 1 to n do
    seed := ((!seed * 1103515245) + 12345) land 0x3fffffff;
    let k = (!seed lsr 8) land (window_size - 1) in
    (match window.(k) with x :: _ -> acc := !acc + x | [] -> ());
    window.(k) <- [ i; i + 1; i + 2; i + 3 ]
  done;
  Printf.printf "%d\n" !acc
