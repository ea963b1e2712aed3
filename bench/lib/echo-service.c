/*
 * echo-service.c - the "C floor" for bench/mpris-latency.
 *
 * A minimal, single-threaded, blocking libdbus service that owns
 * org.mpris.MediaPlayer2.cfloor and, at /org/mpris/MediaPlayer2, answers
 *   - org.mpris.MediaPlayer2.Player.Play with an empty method return;
 *   - org.freedesktop.DBus.Properties.GetAll("org.mpris.MediaPlayer2.Player")
 *     with the full MPRIS Player property set (a{sv}), built afresh per call
 *     the way a real service would.
 * Anything else gets an UnknownMethod error.  It runs until the bus goes away
 * or it is killed.
 */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef BUS_NAME  /* overridable with -DBUS_NAME=... for testing the script */
#define BUS_NAME    "org.mpris.MediaPlayer2.cfloor"
#endif
#define OBJ_PATH    "/org/mpris/MediaPlayer2"
#define PLAYER_IFACE "org.mpris.MediaPlayer2.Player"
#define PROPS_IFACE "org.freedesktop.DBus.Properties"

static void die_oom(void) { fprintf(stderr, "echo-service: out of memory\n"); exit(1); }
static void ok(dbus_bool_t appended) { if (!appended) die_oom(); }

/* Open a dict entry {key: variant<sig>} in an a{sv}; fills *entry and *var. */
static void open_entry(DBusMessageIter *dict, const char *key, const char *sig,
                       DBusMessageIter *entry, DBusMessageIter *var)
{
    ok(dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, NULL, entry));
    ok(dbus_message_iter_append_basic(entry, DBUS_TYPE_STRING, &key));
    ok(dbus_message_iter_open_container(entry, DBUS_TYPE_VARIANT, sig, var));
}
static void close_entry(DBusMessageIter *dict, DBusMessageIter *entry, DBusMessageIter *var)
{
    ok(dbus_message_iter_close_container(entry, var));
    ok(dbus_message_iter_close_container(dict, entry));
}

/* Append one basic-typed entry {key: variant(value)}; sig is the type as a string. */
static void add_entry(DBusMessageIter *dict, const char *key, int type,
                      const char *sig, const void *value)
{
    DBusMessageIter entry, var;
    open_entry(dict, key, sig, &entry, &var);
    ok(dbus_message_iter_append_basic(&var, type, value));
    close_entry(dict, &entry, &var);
}

/* Append the Metadata entry: a nested a{sv}, with an "as" for xesam:artist. */
static void add_metadata(DBusMessageIter *dict)
{
    DBusMessageIter entry, var, md, e2, v2, arr;
    const char *trackid = "/org/earshot/bench/Track/0", *title = "Bench track", *artist = "Bench";
    dbus_int64_t length = 300000000;  /* microseconds */

    open_entry(dict, "Metadata", "a{sv}", &entry, &var);
    ok(dbus_message_iter_open_container(&var, DBUS_TYPE_ARRAY, "{sv}", &md));
    add_entry(&md, "mpris:trackid", DBUS_TYPE_OBJECT_PATH, "o", &trackid);
    add_entry(&md, "mpris:length", DBUS_TYPE_INT64, "x", &length);
    add_entry(&md, "xesam:title", DBUS_TYPE_STRING, "s", &title);
    open_entry(&md, "xesam:artist", "as", &e2, &v2);
    ok(dbus_message_iter_open_container(&v2, DBUS_TYPE_ARRAY, "s", &arr));
    ok(dbus_message_iter_append_basic(&arr, DBUS_TYPE_STRING, &artist));
    ok(dbus_message_iter_close_container(&v2, &arr));
    close_entry(&md, &e2, &v2);
    ok(dbus_message_iter_close_container(&var, &md));
    close_entry(dict, &entry, &var);
}

/* Build the GetAll reply for the Player interface. */
static DBusMessage *player_getall_reply(DBusMessage *call)
{
    DBusMessage *reply = dbus_message_new_method_return(call);
    DBusMessageIter it, dict;
    const char *playing = "Playing", *none = "None";
    double one = 1.0;
    dbus_bool_t no = FALSE, yes = TRUE;
    dbus_int64_t pos = 0;
    static const char *caps[] = { "CanGoNext", "CanGoPrevious", "CanPlay",
                                  "CanPause", "CanSeek", "CanControl" };

    if (!reply) die_oom();
    dbus_message_iter_init_append(reply, &it);
    ok(dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &dict));
    add_entry(&dict, "PlaybackStatus", DBUS_TYPE_STRING, "s", &playing);
    add_entry(&dict, "LoopStatus", DBUS_TYPE_STRING, "s", &none);
    add_entry(&dict, "Rate", DBUS_TYPE_DOUBLE, "d", &one);
    add_entry(&dict, "Shuffle", DBUS_TYPE_BOOLEAN, "b", &no);
    add_metadata(&dict);
    add_entry(&dict, "Volume", DBUS_TYPE_DOUBLE, "d", &one);
    add_entry(&dict, "Position", DBUS_TYPE_INT64, "x", &pos);
    add_entry(&dict, "MinimumRate", DBUS_TYPE_DOUBLE, "d", &one);
    add_entry(&dict, "MaximumRate", DBUS_TYPE_DOUBLE, "d", &one);
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        add_entry(&dict, caps[i], DBUS_TYPE_BOOLEAN, "b", &yes);
    ok(dbus_message_iter_close_container(&it, &dict));
    return reply;
}

/* Handle one incoming message on our object path. */
static DBusHandlerResult handle(DBusConnection *conn, DBusMessage *msg, void *data)
{
    DBusMessage *reply;
    DBusError err;
    const char *iface = NULL;
    (void)data;

    dbus_error_init(&err);
    if (dbus_message_get_type(msg) != DBUS_MESSAGE_TYPE_METHOD_CALL)
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    if (dbus_message_is_method_call(msg, PLAYER_IFACE, "Play")) {
        reply = dbus_message_new_method_return(msg);  /* a real player would start here */
    } else if (!dbus_message_is_method_call(msg, PROPS_IFACE, "GetAll")) {
        reply = dbus_message_new_error(msg, DBUS_ERROR_UNKNOWN_METHOD, "unknown method");
    } else if (!dbus_message_get_args(msg, &err, DBUS_TYPE_STRING, &iface, DBUS_TYPE_INVALID)) {
        reply = dbus_message_new_error(msg, DBUS_ERROR_INVALID_ARGS, err.message);
        dbus_error_free(&err);
    } else if (strcmp(iface, PLAYER_IFACE) == 0) {
        reply = player_getall_reply(msg);
    } else {
        reply = dbus_message_new_error(msg, DBUS_ERROR_UNKNOWN_INTERFACE,
                                       "only org.mpris.MediaPlayer2.Player is served");
    }
    if (!reply || !dbus_connection_send(conn, reply, NULL)) die_oom();
    dbus_message_unref(reply);
    return DBUS_HANDLER_RESULT_HANDLED;
}

int main(void)
{
    DBusError err;
    DBusConnection *conn;
    const DBusObjectPathVTable vtable = { .message_function = handle };
    int ret;

    dbus_error_init(&err);
    conn = dbus_bus_get(DBUS_BUS_SESSION, &err);
    if (!conn) {
        fprintf(stderr, "echo-service: cannot connect to session bus: %s\n", err.message);
        dbus_error_free(&err);
        return 1;
    }
    /* Exit cleanly (status 0) when the private bus goes away. */
    dbus_connection_set_exit_on_disconnect(conn, TRUE);

    if (!dbus_connection_try_register_object_path(conn, OBJ_PATH, &vtable, NULL, &err)) {
        fprintf(stderr, "echo-service: cannot register %s: %s\n", OBJ_PATH, err.message);
        dbus_error_free(&err);
        return 1;
    }
    ret = dbus_bus_request_name(conn, BUS_NAME, DBUS_NAME_FLAG_DO_NOT_QUEUE, &err);
    if (dbus_error_is_set(&err)) {
        fprintf(stderr, "echo-service: RequestName failed: %s\n", err.message);
        dbus_error_free(&err);
        return 1;
    }
    if (ret != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) {
        fprintf(stderr, "echo-service: %s is already owned\n", BUS_NAME);
        return 1;
    }

    /* Single-threaded blocking loop: read, dispatch, write. */
    while (dbus_connection_read_write_dispatch(conn, -1))
        ;
    dbus_connection_unref(conn);
    return 0;
}
