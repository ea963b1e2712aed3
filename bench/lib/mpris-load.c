/*
 * mpris-load.c - steady MPRIS call load on one player, for memory checks.
 *
 * usage: mpris-load DEST RATE SECONDS
 *
 * Connects to the bus in DBUS_SESSION_BUS_ADDRESS and makes RATE calls a second
 * (paced to absolute deadlines, one blocking call at a time) for SECONDS seconds to
 * DEST at /org/mpris/MediaPlayer2, cycling through a mix of ten calls, in this order:
 *   Player.Play
 *   Properties.Get(Player, PlaybackStatus), GetAll(Player)
 *   Properties.Set(Player, Volume, 0.5 or 0.75), Get(Player, Metadata)
 *   Properties.Set(Player, LoopStatus, "None")
 *   errors: Get(Player, NoSuchProperty) (UnknownProperty), Player.NoSuchMethod
 *           (UnknownMethod)
 *   Properties.Get(Player, Position)
 *   Player.Pause
 * (so that a client's state-changing calls come while the player plays, as they do from
 * a desktop's media widget).
 * An error reply is expected for the last two and counted; any other error, or a
 * missing reply, is counted as a failure. Prints one line at the end:
 *   calls=N errors_expected=E failures=F late_ms=L
 * (late_ms: how far the last call started behind its deadline; a large value means the
 * player, or the machine, could not keep up with RATE). Exits 1 when any call failed.
 */
#include <dbus/dbus.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OBJ_PATH     "/org/mpris/MediaPlayer2"
#define PLAYER_IFACE "org.mpris.MediaPlayer2.Player"
#define KINDS        10

static DBusMessage *get(const char *dest, const char *prop)
{
    const char *iface = PLAYER_IFACE;
    DBusMessage *m = dbus_message_new_method_call(dest, OBJ_PATH, DBUS_INTERFACE_PROPERTIES, "Get");
    if (m && !dbus_message_append_args(m, DBUS_TYPE_STRING, &iface, DBUS_TYPE_STRING, &prop, DBUS_TYPE_INVALID)) {
        dbus_message_unref(m);
        m = NULL;
    }
    return m;
}

static DBusMessage *set(const char *dest, const char *prop, int type, const void *value)
{
    const char *iface = PLAYER_IFACE;
    char sig[2] = {(char)type, 0};
    DBusMessageIter it, var;
    DBusMessage *m = dbus_message_new_method_call(dest, OBJ_PATH, DBUS_INTERFACE_PROPERTIES, "Set");
    if (!m) return NULL;
    dbus_message_iter_init_append(m, &it);
    if (!dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &iface) ||
        !dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &prop) ||
        !dbus_message_iter_open_container(&it, DBUS_TYPE_VARIANT, sig, &var)) {
        dbus_message_unref(m);
        return NULL;
    }
    if (!dbus_message_iter_append_basic(&var, type, value) || !dbus_message_iter_close_container(&it, &var)) {
        dbus_message_iter_abandon_container_if_open(&it, &var);
        dbus_message_unref(m);
        return NULL;
    }
    return m;
}

/* Call number i of the mix; *expect_error says whether an error reply is the answer. */
static DBusMessage *make_call(const char *dest, long i, int *expect_error)
{
    const char *iface = PLAYER_IFACE;
    double volume = (i / KINDS) % 2 ? 0.5 : 0.75;
    const char *loop = "None";
    DBusMessage *m = NULL;
    *expect_error = 0;
    switch (i % KINDS) {
    case 0: m = dbus_message_new_method_call(dest, OBJ_PATH, PLAYER_IFACE, "Play"); break;
    case 1: m = get(dest, "PlaybackStatus"); break;
    case 2:
        m = dbus_message_new_method_call(dest, OBJ_PATH, DBUS_INTERFACE_PROPERTIES, "GetAll");
        if (m && !dbus_message_append_args(m, DBUS_TYPE_STRING, &iface, DBUS_TYPE_INVALID)) {
            dbus_message_unref(m);
            m = NULL;
        }
        break;
    case 3: m = set(dest, "Volume", DBUS_TYPE_DOUBLE, &volume); break;
    case 4: m = get(dest, "Metadata"); break;
    case 5: m = set(dest, "LoopStatus", DBUS_TYPE_STRING, &loop); break;
    case 6: m = get(dest, "NoSuchProperty"); *expect_error = 1; break;
    case 7: m = dbus_message_new_method_call(dest, OBJ_PATH, PLAYER_IFACE, "NoSuchMethod"); *expect_error = 1; break;
    case 8: m = get(dest, "Position"); break;
    case 9: m = dbus_message_new_method_call(dest, OBJ_PATH, PLAYER_IFACE, "Pause"); break;
    }
    if (!m) {
        fprintf(stderr, "mpris-load: out of memory building call\n");
        exit(1);
    }
    return m;
}

static void add_ns(struct timespec *t, long ns)
{
    t->tv_nsec += ns;
    while (t->tv_nsec >= 1000000000L) {
        t->tv_nsec -= 1000000000L;
        t->tv_sec++;
    }
}

int main(int argc, char **argv)
{
    DBusError err;
    DBusConnection *conn;
    struct timespec deadline, now;
    long calls, expected = 0, failures = 0;
    double rate, seconds, late_ms = 0;

    if (argc != 4 || (rate = atof(argv[2])) <= 0 || (seconds = atof(argv[3])) <= 0) {
        fprintf(stderr, "usage: %s DEST RATE SECONDS\n", argv[0]);
        return 2;
    }
    calls = (long)(rate * seconds + 0.5);
    long step = (long)(1e9 / rate);

    dbus_error_init(&err);
    conn = dbus_bus_get_private(DBUS_BUS_SESSION, &err);
    if (!conn) {
        fprintf(stderr, "mpris-load: cannot connect to the session bus: %s\n", err.message);
        dbus_error_free(&err);
        return 1;
    }
    dbus_connection_set_exit_on_disconnect(conn, FALSE);

    clock_gettime(CLOCK_MONOTONIC, &deadline);
    for (long i = 0; i < calls; i++) {
        int expect_error;
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {}
        clock_gettime(CLOCK_MONOTONIC, &now);
        late_ms = ((now.tv_sec - deadline.tv_sec) * 1e9 + (now.tv_nsec - deadline.tv_nsec)) / 1e6;
        add_ns(&deadline, step);

        DBusMessage *call = make_call(argv[1], i, &expect_error);
        DBusMessage *reply = dbus_connection_send_with_reply_and_block(conn, call, 5000, &err);
        dbus_message_unref(call);
        if (reply) {
            dbus_message_unref(reply);
            if (expect_error) failures++;
        } else {
            int named = err.name && (strcmp(err.name, DBUS_ERROR_UNKNOWN_PROPERTY) == 0 ||
                                     strcmp(err.name, DBUS_ERROR_UNKNOWN_METHOD) == 0);
            if (expect_error && named) {
                expected++;
            } else {
                if (failures < 5) fprintf(stderr, "mpris-load: call %ld failed: %s: %s\n", i, err.name, err.message);
                failures++;
            }
            dbus_error_free(&err);
        }
    }
    printf("calls=%ld errors_expected=%ld failures=%ld late_ms=%.1f\n", calls, expected, failures, late_ms);
    dbus_connection_close(conn);
    dbus_connection_unref(conn);
    return failures ? 1 : 0;
}
