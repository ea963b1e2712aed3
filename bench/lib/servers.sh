# servers.sh - the private servers every benchmark and scripts/demo start; sourced, not run.
#
# What the tests do in Tests/TestSupport (PrivateBus, PulseAudioServer), for bash:
#   servers_init NAME      a private directory $SERVERS_DIR (mode 700) removed at exit, and an
#                          EXIT trap that kills every process given to servers_track (SIGKILL:
#                          children of a script may ignore SIGTERM) and waits for them; INT and
#                          TERM exit 130. A script with more to undo defines servers_on_exit.
#   servers_private_env    XDG_RUNTIME_DIR, HOME and PULSE_SERVER in $SERVERS_DIR, and nothing of
#                          the caller's desktop (session bus, display, sink, engine device).
#   servers_track PID...   kill PID at exit.
#   servers_bus            a private dbus-daemon (dbus/test-session.conf); exports
#                          DBUS_SESSION_BUS_ADDRESS, sets SERVERS_BUS_PID.
#   servers_pulse [-s SINK] [-k] [-- NULL-SINK-ARGUMENTS...]
#                          a private PulseAudio with one null sink SINK (default "bench") at
#                          48 kHz (desktop defaults otherwise; pass norewinds=1, channels=2…
#                          after --), ALSA's "default" routed to it by libasound2-plugins;
#                          waits until pactl answers; sets SERVERS_PULSE_PID. Its log is
#                          $SERVERS_DIR/pulseaudio.log. -k adds the keepalive below.
#   servers_keepalive [PACAT-ARGUMENTS...]
#                          a silent 10 ms stream, so that the idle null sink does not sleep in
#                          2 s blocks (and its monitor does not drop the start of each sound).
# SERVERS_ENV, an array (for example `env -i PATH=…`), prefixes every server command when set.
# Needs ROOT (the checkout) and a die function, as every benchmark has.

SERVERS_PIDS=()
[[ -v SERVERS_ENV ]] || SERVERS_ENV=()

servers_track() { SERVERS_PIDS+=("$@"); }

servers_cleanup() {
  local p
  if declare -F servers_on_exit >/dev/null; then servers_on_exit || true; fi
  for p in "${SERVERS_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for p in "${SERVERS_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ -n ${SERVERS_DIR:-} ]] && rm -rf "$SERVERS_DIR"
  return 0
}

servers_init() {
  SERVERS_DIR=$(mktemp -d "/tmp/earshot-${1:-bench}.XXXXXX")
  chmod 700 "$SERVERS_DIR"
  trap servers_cleanup EXIT
  trap 'exit 130' INT TERM
}

servers_private_env() {
  export XDG_RUNTIME_DIR=$SERVERS_DIR HOME=$SERVERS_DIR PULSE_SERVER=unix:$SERVERS_DIR/pulse/native
  unset DBUS_SESSION_BUS_ADDRESS DISPLAY WAYLAND_DISPLAY EARSHOT_AUDIO_DEVICE PULSE_SINK PULSE_SOURCE ALSA_CONFIG_PATH
}

servers_bus() {
  local file=$SERVERS_DIR/bus
  : >"$file"
  # One descriptor each: dbus-daemon closes the address's after writing it.
  # Listening in SERVERS_DIR, which goes with the run (the config's tmpdir is /tmp).
  "${SERVERS_ENV[@]}" dbus-daemon --config-file="$ROOT/dbus/test-session.conf" --address="unix:dir=$SERVERS_DIR" --nofork \
    --print-address=3 --print-pid=4 3>"$file" 4>"$file.pid" </dev/null >"$SERVERS_DIR/dbus-daemon.log" 2>&1 &
  servers_track $!
  for _ in $(seq 200); do [[ -s $file && -s $file.pid ]] && break; sleep 0.025; done
  [[ -s $file && -s $file.pid ]] || die "the private dbus-daemon did not start: $(cat "$SERVERS_DIR/dbus-daemon.log")"
  DBUS_SESSION_BUS_ADDRESS=$(head -n1 "$file")
  SERVERS_BUS_PID=$(head -n1 "$file.pid")
  export DBUS_SESSION_BUS_ADDRESS
}

servers_pulse() {
  local sink=bench keepalive=0
  while (($#)); do
    case $1 in
      -s) sink=$2; shift 2 ;;
      -k) keepalive=1; shift ;;
      --) shift; break ;;
      *) break ;;
    esac
  done
  "${SERVERS_ENV[@]}" pulseaudio -n --daemonize=no --exit-idle-time=-1 --disallow-exit --log-target=stderr \
    --load="module-null-sink sink_name=$sink rate=48000 $*" --load="module-native-protocol-unix auth-anonymous=1" \
    </dev/null >"$SERVERS_DIR/pulseaudio.log" 2>&1 &
  SERVERS_PULSE_PID=$!
  servers_track "$SERVERS_PULSE_PID"
  for _ in $(seq 200); do "${SERVERS_ENV[@]}" pactl info >/dev/null 2>&1 && break; sleep 0.025; done
  "${SERVERS_ENV[@]}" pactl info >/dev/null 2>&1 ||
    { tail -n 20 "$SERVERS_DIR/pulseaudio.log" >&2; die "the private pulseaudio did not start"; }
  ((keepalive)) && servers_keepalive
  return 0
}

servers_keepalive() {
  "${SERVERS_ENV[@]}" pacat --playback --latency-msec=10 --format=float32le --rate=48000 --channels=2 "$@" \
    --raw /dev/zero </dev/null >"$SERVERS_DIR/keepalive.log" 2>&1 &
  servers_track $!
}

