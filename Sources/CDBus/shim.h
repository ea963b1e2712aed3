#ifndef EARSHOT_CDBUS_SHIM_H
#define EARSHOT_CDBUS_SHIM_H

#include <dbus/dbus.h>
#include <sys/eventfd.h>
#include <poll.h>

/* DBUS_TYPE_* are `((int) 'x')` macros, which Swift does not import. */
enum {
    CDBUS_TYPE_INVALID = 0,
    CDBUS_TYPE_BYTE = 'y',
    CDBUS_TYPE_BOOLEAN = 'b',
    CDBUS_TYPE_INT16 = 'n',
    CDBUS_TYPE_UINT16 = 'q',
    CDBUS_TYPE_INT32 = 'i',
    CDBUS_TYPE_UINT32 = 'u',
    CDBUS_TYPE_INT64 = 'x',
    CDBUS_TYPE_UINT64 = 't',
    CDBUS_TYPE_DOUBLE = 'd',
    CDBUS_TYPE_STRING = 's',
    CDBUS_TYPE_OBJECT_PATH = 'o',
    CDBUS_TYPE_SIGNATURE = 'g',
    CDBUS_TYPE_UNIX_FD = 'h',
    CDBUS_TYPE_ARRAY = 'a',
    CDBUS_TYPE_VARIANT = 'v',
    CDBUS_TYPE_STRUCT = 'r',
    CDBUS_TYPE_DICT_ENTRY = 'e',
};

#endif
