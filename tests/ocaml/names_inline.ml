(* names_inline.ml - a function small enough for ocamlopt to inline into
   its callers (names_target.ml): the line rows of the code it puts there
   name this file. *)

let pair x = (x, x + 1)
