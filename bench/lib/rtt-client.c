/*
 * rtt-client.c - round-trip latency client for bench/mpris-latency.
 *
 * usage: rtt-client DEST play|getall [COUNT [WARMUP]]
 *
 * Connects to the bus in DBUS_SESSION_BUS_ADDRESS, makes WARMUP (default 200)
 * untimed calls, then COUNT (default 2000) sequential blocking calls to DEST at
 * /org/mpris/MediaPlayer2, timing each with CLOCK_MONOTONIC:
 *   play   -> org.mpris.MediaPlayer2.Player.Play()
 *   getall -> org.freedesktop.DBus.Properties.GetAll("org.mpris.MediaPlayer2.Player")
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

int main(int argc, char **argv)
{
    DBusError err;
    DBusConnection *conn;
    const char *dest;
    int getall, count = 2000, warmup = 200;
    double *t, sum = 0;

    if (argc < 3 || argc > 5 ||
        (strcmp(argv[2], "play") != 0 && strcmp(argv[2], "getall") != 0)) {
        fprintf(stderr, "usage: %s DEST play|getall [COUNT [WARMUP]]\n", argv[0]);
        return 2;
    }
    dest = argv[1];
    getall = strcmp(argv[2], "getall") == 0;
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

    t = malloc(sizeof *t * (size_t)count);
    if (!t) {
        fprintf(stderr, "rtt-client: out of memory\n");
        return 1;
    }
    for (int i = 0; i < warmup; i++)
        one_call(conn, dest, getall);
    for (int i = 0; i < count; i++) {
        t[i] = one_call(conn, dest, getall);
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
