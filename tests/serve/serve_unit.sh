#!/bin/sh
# serve_unit.sh - contrib/systemd/ocgc-serve.service, and what its comments
# claim:
# - `systemd-analyze verify` accepts it without a word, with ExecStart
#   pointed at this build's ocgc through a temporary copy, and
#   `systemd-analyze security --offline` rates its exposure OK (skipped,
#   saying so, without systemd-analyze);
# - it starts as root and drops to its user with --run-as, which keeps
#   two capabilities: started as root with the unit's bounding set only
#   (setpriv, as systemd would), `ocgc serve --all --run-as nobody` ends
#   as nobody with CapEff, CapPrm and CapBnd those two and NoNewPrivs 1,
#   and serves the two root rings below;
# - its two capabilities are enough and both needed (as root, with
#   setpriv): a root program on ocgc's runtime and a root stock OCaml 5 ring
#   (0600, in a 0700 folder) are served by `ocgc serve --all` run as user
#   nobody with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH only, open fds
#   included; with either alone, or none, `ocgc ls` (the discovery serve
#   --all makes) lists neither.  Skipped, saying so, where nobody_why
#   (lib.sh) says uid 65534 cannot be tried, or without a user nobody.
. "$OCGC_SRCDIR/tests/lib/lib.sh"
. "$OCGC_SRCDIR/tests/lib/attach_lib.sh"
. "$OCGC_SRCDIR/tests/lib/cmd_lib.sh"
. "$OCGC_SRCDIR/tests/lib/serve_lib.sh"
UNIT="$OCGC_SRCDIR/contrib/systemd/ocgc-serve.service"
CAPS=+sys_ptrace,+dac_read_search
UNIT_BOUND='CapabilityBoundingSet=CAP_SYS_PTRACE CAP_DAC_READ_SEARCH CAP_SETUID CAP_SETGID CAP_SETPCAP'
RAN=0
attach_init
test -f "$UNIT" || hard_error "$UNIT is missing"

# ---- the unit, verified ----
check_unit() {
  check_true "the unit runs /usr/local/bin/ocgc serve --all (make install rewrites that path)" \
    grep -q '^ExecStart=/usr/local/bin/ocgc serve .*--all' "$UNIT"
  check_true "the unit drops to its user with --run-as ocgc" \
    grep -q '^ExecStart=/usr/local/bin/ocgc serve .*--run-as ocgc' "$UNIT"
  check_true "the unit's bounding set: the two, and what --run-as takes to drop to them" \
    grep -qx "$UNIT_BOUND" "$UNIT"
  check_false "the unit grants nothing ambient (--run-as keeps what it needs)" \
    grep -q '^AmbientCapabilities=' "$UNIT"
  sed "s|^ExecStart=/usr/local/bin/ocgc |ExecStart=$OCGC |" "$UNIT" >"$WORK/ocgc-serve.service"
  check_true "the copy runs this build's ocgc" grep -q -F "ExecStart=$OCGC serve" "$WORK/ocgc-serve.service"
  (cd "$WORK" && systemd-analyze verify --man=no ./ocgc-serve.service) >"$WORK/verify.out" 2>&1
  _rc=$?
  check_eq "systemd-analyze verify: exit status" 0 "$_rc"
  check_eq "systemd-analyze verify: lines said (`head -n 2 "$WORK/verify.out" | tr '\n' ' '`)" \
    0 "`lines_of verify.out`"
  if (cd "$WORK" && systemd-analyze security --offline=true --no-pager ./ocgc-serve.service) \
      >"$WORK/security.out" 2>&1; then
    check_eq "systemd-analyze security: exposure (`tail -n 1 "$WORK/security.out"`)" OK \
      "`sed -n 's/.*Overall exposure level for ocgc-serve.service: [0-9.]* \([A-Z]*\).*/\1/p' "$WORK/security.out"`"
  else
    say "systemd-analyze security --offline is not supported here (systemd < 250): not rated"
  fi
  RAN=1
}
if command -v systemd-analyze >/dev/null 2>&1; then
  check_unit
else
  say "SKIP part: systemd-analyze is missing (apt-get install systemd): the unit is not verified"
fi

# ---- the privileges, tried ----

# pub_ocgc: this build's ocgc (and libocgc) where nobody may run it (the
# build folder may be in /root), and $WORK/pub/nobody, which runs it as
# user nobody holding only the capabilities $NOBODY_CAPS names (setpriv's
# "+cap,..." list, empty for none); ocgc_cmd and serve run it as $OCGC.
pub_ocgc() {
  chmod 0711 "$WORK" && mkdir -m 0755 "$WORK/pub" || hard_error "cannot make $WORK/pub"
  if test -x "$OCGC_BUILDDIR/tools/.libs/ocgc"; then # libtool's wrapper runs this one
    cp "$OCGC_BUILDDIR/tools/.libs/ocgc" "$WORK/pub/" &&
      cp -P "$OCGC_BUILDDIR"/.libs/libocgc.so* "$WORK/pub/"
  else
    cp "$OCGC" "$WORK/pub/"
  fi || hard_error "cannot copy ocgc into $WORK/pub"
  cat >"$WORK/pub/nobody" <<EOF
#!/bin/sh
c=-all\${NOBODY_CAPS:+,\$NOBODY_CAPS}
exec setpriv --reuid=nobody --regid=`id -g nobody` --clear-groups --inh-caps=\$c \\
  --ambient-caps=\$c --bounding-set=\$c env -u XDG_RUNTIME_DIR \\
  LD_LIBRARY_PATH="$WORK/pub" "$WORK/pub/ocgc" "\$@"
EOF
  chmod -R a+rX "$WORK/pub" && chmod 0755 "$WORK/pub/nobody" || hard_error "cannot chmod $WORK/pub"
  OCGC_BUILT=$OCGC
  OCGC="$WORK/pub/nobody"
}

# listed TAG PID: whether `ocgc ls --json` (TAG.out) lists PID running
listed() { grep -q "\"pid\": $2,.*\"state\": \"running\"" "$WORK/$1.out"; }

# serve_nobody: `ocgc serve --all` as nobody with the unit's capabilities
# serves both root rings
serve_nobody() {
  export NOBODY_CAPS=$CAPS
  serve srv --listen 127.0.0.1:0 --all
  check_eq "nobody with both: GET /metrics" 200 "`get m /metrics`"
  for _p in "$pid_t" "$pid_s"; do
    check_eq "nobody with both: serve shows $_p's runtime" 1 "`series m $_p ocaml_runtime_info`"
    check_eq "nobody with both: serve shows $_p's open fds" 1 "`series m $_p ocaml_process_open_fds`"
  done
  check_gt "nobody with both: serve read $pid_t's collections" 0 \
    "`series m $pid_t ocaml_gc_collections_total`"
  check_eq "nobody with both: it sees every user" 1 \
    "`awk '$1 == "ocgc_serve_sees_every_user" { print $2 }' "$WORK/m"`"
  kill -TERM "$srv"
  ocgc_wait srv
}

# serve_unitlike: `ocgc serve --all --run-as nobody` started as root with
# the unit's bounding set only (as systemd starts it): it ends as nobody
# with the two capabilities and no_new_privs, and serves both root rings
serve_unitlike() {
  cat >"$WORK/pub/unitlike" <<EOF
#!/bin/sh
exec setpriv --inh-caps=-all --bounding-set=-all,+sys_ptrace,+dac_read_search,+setuid,+setgid,+setpcap \\
  env -u XDG_RUNTIME_DIR LD_LIBRARY_PATH="$WORK/pub" "$WORK/pub/ocgc" "\$@"
EOF
  chmod 0755 "$WORK/pub/unitlike" || hard_error "cannot chmod $WORK/pub/unitlike"
  _nob=$OCGC
  OCGC="$WORK/pub/unitlike"
  serve srv_unit --listen 127.0.0.1:0 --all --run-as nobody
  for _f in CapEff CapPrm CapBnd; do
    check_eq "as the unit, then --run-as nobody: $_f (CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH)" \
      0000000000080004 "`sed -n "s/^$_f:[[:space:]]*//p" /proc/$srv/status`"
  done
  check_eq "as the unit, then --run-as nobody: its uid" 65534 \
    "`awk '$1 == "Uid:" { print $3 }' /proc/$srv/status`"
  check_eq "as the unit, then --run-as nobody: NoNewPrivs" 1 \
    "`sed -n 's/^NoNewPrivs:[[:space:]]*//p' /proc/$srv/status`"
  check_eq "as the unit: GET /metrics" 200 "`get m_unit /metrics`"
  for _p in "$pid_t" "$pid_s"; do
    check_eq "as the unit: serve shows $_p's runtime" 1 "`series m_unit $_p ocaml_runtime_info`"
  done
  kill -TERM "$srv"
  ocgc_wait srv_unit
  check_eq "as the unit: exit status" 0 "`rc_of srv_unit`"
  OCGC=$_nob
}

# check_privileges: a root program on ocgc's runtime and a root stock ring,
# then nobody with the unit's capabilities, with each alone, with none
check_privileges() {
  compile_native cmd_target ocgc_test.ml cmd_target.ml
  target_start t 0.2
  pid_t=$BGPID
  target_go t
  wait_key t gc.heap_chunks "$pid_t"
  mkdir -m 0700 "$WORK/stock" || hard_error "cannot make $WORK/stock"
  xz -dc "$OCGC_SRCDIR/tests/fixtures/ocaml5.2/pt-3447.events.xz" |
    cp --sparse=always /dev/stdin "$WORK/stock/fixture" || hard_error "cannot unpack the fixture"
  # The ring is <its holder's pid>.events, 0600 as OCaml 5 makes it.
  start_bg stock sh -c 'cp --sparse=always "$1/fixture" "$1/$$.events" && chmod 0600 "$1/$$.events" &&
    exec python3 "$2" "$1/$$.events" ocaml5_fixture "$3"' \
    sh "$WORK/stock" "$OCGC_SRCDIR/tests/serve/serve_prom_holder.py" "$WORK/stock.stop"
  pid_s=$BGPID
  wait_key stock ready "$pid_s"
  pub_ocgc
  export NOBODY_CAPS=$CAPS
  ocgc_cmd ls_both ls --json
  check_true "nobody with both: ocgc ls lists the ocgc program" listed ls_both "$pid_t"
  check_true "nobody with both: ocgc ls lists the stock ring" listed ls_both "$pid_s"
  serve_nobody
  serve_unitlike
  for _c in +sys_ptrace +dac_read_search none; do
    NOBODY_CAPS=`test $_c = none || echo $_c`
    ocgc_cmd ls_$_c ls --json
    check_eq "nobody with $_c only: ocgc ls ran" 0 "`rc_of ls_$_c`"
    check_false "nobody with $_c only: ocgc ls lists not the ocgc program" listed ls_$_c "$pid_t"
    check_false "nobody with $_c only: ocgc ls lists not the stock ring" listed ls_$_c "$pid_s"
  done
  # Without them, serve says it does not see every user, and counts as
  # unreadable only the processes with a ring it can see: the stock ring's
  # holder, whose PID.events shows in a folder nobody may list (--dir; a
  # link to the ring), not every root process (it counted them all).
  mkdir -m 0755 "$WORK/shared" && ln "$WORK/stock/$pid_s.events" "$WORK/shared/$pid_s.events" ||
    hard_error "cannot link the stock ring into $WORK/shared"
  NOBODY_CAPS=
  serve srv_none --listen 127.0.0.1:0 --all --dir "$WORK/shared"
  check_eq "nobody with none: GET /metrics" 200 "`get m_none /metrics`"
  check_eq "nobody with none: it does not see every user" 0 \
    "`awk '$1 == "ocgc_serve_sees_every_user" { print $2 }' "$WORK/m_none"`"
  check_true "nobody with none: it says so" grep -q 'ocgc_serve_sees_every_user 0' "$WORK/srv_none.err"
  check_eq "nobody with none: unreadable, the one root process with a ring it can see" 1 \
    "`awk '$1 == "ocgc_serve_unreadable_processes" { print $2 }' "$WORK/m_none"`"
  kill -TERM "$srv"
  ocgc_wait srv_none
  OCGC=$OCGC_BUILT
  target_stop t "$pid_t"
  stop_bg stock "$pid_s"
  RAN=1
}
NOBODY_WHY=`nobody_why`
if test -n "$NOBODY_WHY"; then
  say "SKIP part: the capabilities are not tried: $NOBODY_WHY"
elif ! id nobody >/dev/null 2>&1; then
  say "SKIP part: the user nobody is missing: the capabilities are not tried"
elif ! command -v xz >/dev/null 2>&1; then
  say "SKIP part: xz is missing: the capabilities are not tried"
else
  check_privileges
fi
test "$RAN" = 1 || { echo "SKIP: nothing to run here (see above)"; exit 77; }
finish
