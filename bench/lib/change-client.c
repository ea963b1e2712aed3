/*
 * change-client.c - state-change latency client for bench/mpris-latency.
 *
 * usage: change-client DEST [COUNT [GAP_MS]]
 *
 * Connects to the bus in DBUS_SESSION_BUS_ADDRESS and, COUNT times (default 40),
 * sends org.mpris.MediaPlayer2.Player.Pause and Play to DEST in turn, each GAP_MS
 * (default 250) after the last, and times from sending the call to the arrival of
 * the PropertiesChanged from DEST's owner whose changed properties carry the
 * PlaybackStatus the call leads to ("Paused", "Playing"): how late a client that
 * caches the state (a desktop's key daemon) learns of a change. The gap is longer
 * than a player's coalescing interval, so each change is the first of its burst.
 * Prints one line:  median_us=M p99_us=P mean_us=A min_us=L max_us=X n=N
 * A call answered with an error, or no such signal within 2 s, is fatal (exit 1).
 */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OBJ_PATH     "/org/mpris/MediaPlayer2"
#define PLAYER_IFACE "org.mpris.MediaPlayer2.Player"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Whether `signal` (PropertiesChanged) sets PlaybackStatus to `status`. */
static int sets_status(DBusMessage *signal, const char *status)
{
    DBusMessageIter args, dict, entry, variant;
    const char *interface, *key, *value;

    if (!dbus_message_iter_init(signal, &args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_STRING)
        return 0;
    dbus_message_iter_get_basic(&args, &interface);
    if (strcmp(interface, PLAYER_IFACE) != 0 || !dbus_message_iter_next(&args) ||
        dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY)
        return 0;
    for (dbus_message_iter_recurse(&args, &dict); dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&dict)) {
        dbus_message_iter_recurse(&dict, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        if (strcmp(key, "PlaybackStatus") != 0 || !dbus_message_iter_next(&entry))
            continue;
        dbus_message_iter_recurse(&entry, &variant);
        if (dbus_message_iter_get_arg_type(&variant) != DBUS_TYPE_STRING)
            return 0;
        dbus_message_iter_get_basic(&variant, &value);
        return strcmp(value, status) == 0;
    }
    return 0;
}

/* One change: sends `method`, waits for the signal setting `status`; returns microseconds. */
static double one_change(DBusConnection *conn, const char *dest, const char *owner, const char *method, const char *status)
{
    DBusMessage *call = dbus_message_new_method_call(dest, OBJ_PATH, PLAYER_IFACE, method), *message;
    dbus_uint32_t serial = 0;
    double t0, deadline;

    if (!call) {
        fprintf(stderr, "change-client: out of memory building call\n");
        exit(1);
    }
    t0 = now_us();
    if (!dbus_connection_send(conn, call, &serial)) {
        fprintf(stderr, "change-client: out of memory sending %s\n", method);
        exit(1);
    }
    dbus_message_unref(call);
    deadline = t0 + 2e6;
    while (now_us() < deadline) {
        dbus_connection_read_write(conn, 10);
        while ((message = dbus_connection_pop_message(conn)) != NULL) {
            int type = dbus_message_get_type(message);
            if (type == DBUS_MESSAGE_TYPE_ERROR && dbus_message_get_reply_serial(message) == serial) {
                fprintf(stderr, "change-client: %s %s failed: %s\n", dest, method, dbus_message_get_error_name(message));
                exit(1);
            }
            if (dbus_message_is_signal(message, DBUS_INTERFACE_PROPERTIES, "PropertiesChanged") &&
                strcmp(dbus_message_get_sender(message), owner) == 0 && sets_status(message, status)) {
                double t1 = now_us();
                dbus_message_unref(message);
                /* The reply may come after the signal; it is read (and dropped) later. */
                return t1 - t0;
            }
            dbus_message_unref(message);
        }
    }
    fprintf(stderr, "change-client: no PropertiesChanged with PlaybackStatus %s from %s within 2 s of %s\n", status, dest, method);
    exit(1);
}

int main(int argc, char **argv)
{
    DBusError err;
    DBusConnection *conn;
    const char *dest, *owner;
    int count = 40, gap = 250;
    double *t, sum = 0;
    char rule[512];

    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s DEST [COUNT [GAP_MS]]\n", argv[0]);
        return 2;
    }
    dest = argv[1];
    if (argc > 2) count = atoi(argv[2]);
    if (argc > 3) gap = atoi(argv[3]);
    if (count < 2 || gap < 0) {
        fprintf(stderr, "change-client: COUNT must be >= 2 and GAP_MS >= 0\n");
        return 2;
    }

    dbus_error_init(&err);
    conn = dbus_bus_get_private(DBUS_BUS_SESSION, &err);
    if (!conn) {
        fprintf(stderr, "change-client: cannot connect to session bus: %s\n", err.message);
        dbus_error_free(&err);
        return 1;
    }
    dbus_connection_set_exit_on_disconnect(conn, FALSE);

    /* The signal comes from the owner's unique name, not the well-known one. */
    DBusMessage *ask = dbus_message_new_method_call(DBUS_SERVICE_DBUS, DBUS_PATH_DBUS, DBUS_INTERFACE_DBUS, "GetNameOwner");
    DBusMessage *reply;
    if (!ask || !dbus_message_append_args(ask, DBUS_TYPE_STRING, &dest, DBUS_TYPE_INVALID) ||
        !(reply = dbus_connection_send_with_reply_and_block(conn, ask, 5000, &err)) ||
        !dbus_message_get_args(reply, &err, DBUS_TYPE_STRING, &owner, DBUS_TYPE_INVALID)) {
        fprintf(stderr, "change-client: no owner for %s: %s\n", dest, err.message ? err.message : "out of memory");
        return 1;
    }
    owner = strdup(owner);
    dbus_message_unref(reply);
    dbus_message_unref(ask);
    snprintf(rule, sizeof rule,
             "type='signal',sender='%s',path='" OBJ_PATH "',interface='" DBUS_INTERFACE_PROPERTIES "',member='PropertiesChanged'", owner);
    dbus_bus_add_match(conn, rule, &err);
    if (dbus_error_is_set(&err)) {
        fprintf(stderr, "change-client: AddMatch failed: %s\n", err.message);
        return 1;
    }

    t = malloc(sizeof *t * (size_t)count);
    if (!t) {
        fprintf(stderr, "change-client: out of memory\n");
        return 1;
    }
    /* Start from Playing: a Play first (its change, if any, is not timed). */
    DBusMessage *play = dbus_message_new_method_call(dest, OBJ_PATH, PLAYER_IFACE, "Play");
    DBusMessage *played = play ? dbus_connection_send_with_reply_and_block(conn, play, 5000, &err) : NULL;
    if (!played) {
        fprintf(stderr, "change-client: Play failed: %s\n", err.message ? err.message : "out of memory");
        return 1;
    }
    dbus_message_unref(played);
    dbus_message_unref(play);
    for (int i = 0; i < count; i++) {
        sleep_ms(gap);
        dbus_connection_read_write(conn, 0);
        while ((reply = dbus_connection_pop_message(conn)) != NULL) dbus_message_unref(reply);
        t[i] = i % 2 ? one_change(conn, dest, owner, "Play", "Playing") : one_change(conn, dest, owner, "Pause", "Paused");
        sum += t[i];
    }

    qsort(t, (size_t)count, sizeof *t, cmp_double);
    double median = count % 2 ? t[count / 2] : (t[count / 2 - 1] + t[count / 2]) / 2;
    int p99i = (int)((99L * count + 99) / 100) - 1;
    printf("median_us=%.1f p99_us=%.1f mean_us=%.1f min_us=%.1f max_us=%.1f n=%d\n",
           median, t[p99i], sum / count, t[0], t[count - 1], count);

    free(t);
    dbus_connection_close(conn);
    dbus_connection_unref(conn);
    return 0;
}
