/*
 * rtt-client.c - round-trip latency client for bench/mpris-latency.
 *
 * usage: rtt-client DEST play|getall|change [COUNT [WARMUP]]
 *
 * Connects to the bus in DBUS_SESSION_BUS_ADDRESS, makes WARMUP (default 200)
 * untimed calls, then COUNT (default 2000) sequential blocking calls to DEST at
 * /org/mpris/MediaPlayer2, timing each with CLOCK_MONOTONIC:
 *   play   -> org.mpris.MediaPlayer2.Player.Play()
 *   getall -> org.freedesktop.DBus.Properties.GetAll("org.mpris.MediaPlayer2.Player")
 *   change -> Player.Pause and Play in turn, CHANGE_GAP_MS apart (longer than a
 *             player's coalescing interval, so that each change is the first of its
 *             burst), each timed from sending the call to the arrival of the
 *             PropertiesChanged from DEST's owner that carries the PlaybackStatus it
 *             leads to: how late a client that caches the state (a desktop's key
 *             daemon) learns of a change. WARMUP here is untimed changes; no such
 *             signal within 2 s is fatal.
 * Prints one line:  median_us=M p99_us=P mean_us=A min_us=L max_us=X n=N
 * Any error reply (or a GetAll reply that is not a{sv}) is fatal (exit 1).
 */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OBJ_PATH     "/org/mpris/MediaPlayer2"
#define PLAYER_IFACE "org.mpris.MediaPlayer2.Player"
#define CHANGE_GAP_MS 250

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

/* Build a fresh call message (a real client builds one per call too). */
static DBusMessage *make_call(const char *dest, int getall)
{
    DBusMessage *m;
    if (getall) {
        const char *iface = PLAYER_IFACE;
        m = dbus_message_new_method_call(dest, OBJ_PATH, DBUS_INTERFACE_PROPERTIES, "GetAll");
        if (m && !dbus_message_append_args(m, DBUS_TYPE_STRING, &iface, DBUS_TYPE_INVALID)) {
            dbus_message_unref(m);
            m = NULL;
        }
    } else {
        m = dbus_message_new_method_call(dest, OBJ_PATH, PLAYER_IFACE, "Play");
    }
    if (!m) {
        fprintf(stderr, "rtt-client: out of memory building call\n");
        exit(1);
    }
    return m;
}

/* One blocking round trip; returns its duration in microseconds. */
static double one_call(DBusConnection *conn, const char *dest, int getall)
{
    DBusError err;
    DBusMessage *call = make_call(dest, getall), *reply;
    double t0, t1;

    dbus_error_init(&err);
    t0 = now_us();
    reply = dbus_connection_send_with_reply_and_block(conn, call, 5000, &err);
    t1 = now_us();
    dbus_message_unref(call);
    if (!reply) {
        fprintf(stderr, "rtt-client: %s %s failed: %s: %s\n", dest,
                getall ? "GetAll" : "Play", err.name, err.message);
        dbus_error_free(&err);
        exit(1);
    }
    if (getall && strcmp(dbus_message_get_signature(reply), "a{sv}") != 0) {
        fprintf(stderr, "rtt-client: GetAll reply has signature '%s', want a{sv}\n",
                dbus_message_get_signature(reply));
        exit(1);
    }
    dbus_message_unref(reply);
    return t1 - t0;
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
        fprintf(stderr, "rtt-client: out of memory building call\n");
        exit(1);
    }
    t0 = now_us();
    if (!dbus_connection_send(conn, call, &serial)) {
        fprintf(stderr, "rtt-client: out of memory sending %s\n", method);
        exit(1);
    }
    dbus_message_unref(call);
    deadline = t0 + 2e6;
    while (now_us() < deadline) {
        dbus_connection_read_write(conn, 10);
        while ((message = dbus_connection_pop_message(conn)) != NULL) {
            int type = dbus_message_get_type(message);
            if (type == DBUS_MESSAGE_TYPE_ERROR && dbus_message_get_reply_serial(message) == serial) {
                fprintf(stderr, "rtt-client: %s %s failed: %s\n", dest, method, dbus_message_get_error_name(message));
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
    fprintf(stderr, "rtt-client: no PropertiesChanged with PlaybackStatus %s from %s within 2 s of %s\n", status, dest, method);
    exit(1);
}

/* The unique name that owns `dest`: signals come from it, not from the well-known name. */
static const char *owner_of(DBusConnection *conn, const char *dest)
{
    DBusError err;
    DBusMessage *ask = dbus_message_new_method_call(DBUS_SERVICE_DBUS, DBUS_PATH_DBUS, DBUS_INTERFACE_DBUS, "GetNameOwner");
    DBusMessage *reply = NULL;
    const char *owner = NULL;

    dbus_error_init(&err);
    if (!ask || !dbus_message_append_args(ask, DBUS_TYPE_STRING, &dest, DBUS_TYPE_INVALID) ||
        !(reply = dbus_connection_send_with_reply_and_block(conn, ask, 5000, &err)) ||
        !dbus_message_get_args(reply, &err, DBUS_TYPE_STRING, &owner, DBUS_TYPE_INVALID)) {
        fprintf(stderr, "rtt-client: no owner for %s: %s\n", dest, dbus_error_is_set(&err) ? err.message : "out of memory");
        exit(1);
    }
    owner = strdup(owner);
    dbus_message_unref(reply);
    dbus_message_unref(ask);
    return owner;
}

/* One timed sample of `mode`: a round trip, or (mode 2) the `i`-th state change. */
static double one_sample(DBusConnection *conn, const char *dest, int mode, const char *owner, int i)
{
    if (mode < 2)
        return one_call(conn, dest, mode);
    DBusMessage *stale;
    sleep_ms(CHANGE_GAP_MS);
    dbus_connection_read_write(conn, 0);
    while ((stale = dbus_connection_pop_message(conn)) != NULL)
        dbus_message_unref(stale);
    return i % 2 ? one_change(conn, dest, owner, "Play", "Playing") : one_change(conn, dest, owner, "Pause", "Paused");
}

int main(int argc, char **argv)
{
    DBusError err;
    DBusConnection *conn;
    const char *dest, *owner = NULL;
    int mode, count = 2000, warmup = 200;
    double *t, sum = 0;

    if (argc < 3 || argc > 5 ||
        (strcmp(argv[2], "play") != 0 && strcmp(argv[2], "getall") != 0 && strcmp(argv[2], "change") != 0)) {
        fprintf(stderr, "usage: %s DEST play|getall|change [COUNT [WARMUP]]\n", argv[0]);
        return 2;
    }
    dest = argv[1];
    mode = strcmp(argv[2], "play") == 0 ? 0 : strcmp(argv[2], "getall") == 0 ? 1 : 2;
    if (argc > 3) count = atoi(argv[3]);
    if (argc > 4) warmup = atoi(argv[4]);
    if (count < 1 || warmup < 0) {
        fprintf(stderr, "rtt-client: COUNT must be >= 1 and WARMUP >= 0\n");
        return 2;
    }

    dbus_error_init(&err);
    conn = dbus_bus_get_private(DBUS_BUS_SESSION, &err);
    if (!conn) {
        fprintf(stderr, "rtt-client: cannot connect to session bus: %s\n", err.message);
        dbus_error_free(&err);
        return 1;
    }
    dbus_connection_set_exit_on_disconnect(conn, FALSE);
    if (mode == 2) {
        char rule[512];
        owner = owner_of(conn, dest);
        snprintf(rule, sizeof rule, "type='signal',sender='%s',path='" OBJ_PATH "',interface='" DBUS_INTERFACE_PROPERTIES
                 "',member='PropertiesChanged'", owner);
        dbus_bus_add_match(conn, rule, &err);
        if (dbus_error_is_set(&err)) {
            fprintf(stderr, "rtt-client: AddMatch failed: %s\n", err.message);
            return 1;
        }
        /* From Playing: the timed changes are Pause, Play, Pause, ... */
        one_call(conn, dest, 0);
    }

    t = malloc(sizeof *t * (size_t)count);
    if (!t) {
        fprintf(stderr, "rtt-client: out of memory\n");
        return 1;
    }
    for (int i = 0; i < warmup; i++)
        one_sample(conn, dest, mode, owner, i);
    /* An even number of warm-up changes leaves the player Playing. */
    for (int i = 0; i < count; i++) {
        t[i] = one_sample(conn, dest, mode, owner, mode == 2 ? i + warmup % 2 : i);
        sum += t[i];
    }

    qsort(t, (size_t)count, sizeof *t, cmp_double);
    /* Median: middle element (mean of the two middles for even counts). */
    double median = count % 2 ? t[count / 2] : (t[count / 2 - 1] + t[count / 2]) / 2;
    /* p99: nearest-rank, ceil(0.99 * n) - 1. */
    int p99i = (int)((99L * count + 99) / 100) - 1;
    printf("median_us=%.1f p99_us=%.1f mean_us=%.1f min_us=%.1f max_us=%.1f n=%d\n",
           median, t[p99i], sum / count, t[0], t[count - 1], count);

    free(t);
    dbus_connection_close(conn);
    dbus_connection_unref(conn);
    return 0;
}
