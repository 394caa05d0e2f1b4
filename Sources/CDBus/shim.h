// Static inline wrappers for the parts of libdbus-1 Swift cannot call directly
// (variadic functions and type-code macros). Nothing else belongs here.
#ifndef COFFER_CDBUS_SHIM_H
#define COFFER_CDBUS_SHIM_H
#include <dbus/dbus.h>

// Type codes: the DBUS_TYPE_* macros cast a char to int, which Swift does not import.
static const int cdbus_type_invalid = DBUS_TYPE_INVALID;
static const int cdbus_type_byte = DBUS_TYPE_BYTE;
static const int cdbus_type_boolean = DBUS_TYPE_BOOLEAN;
static const int cdbus_type_int16 = DBUS_TYPE_INT16;
static const int cdbus_type_uint16 = DBUS_TYPE_UINT16;
static const int cdbus_type_int32 = DBUS_TYPE_INT32;
static const int cdbus_type_uint32 = DBUS_TYPE_UINT32;
static const int cdbus_type_int64 = DBUS_TYPE_INT64;
static const int cdbus_type_uint64 = DBUS_TYPE_UINT64;
static const int cdbus_type_double = DBUS_TYPE_DOUBLE;
static const int cdbus_type_string = DBUS_TYPE_STRING;
static const int cdbus_type_object_path = DBUS_TYPE_OBJECT_PATH;
static const int cdbus_type_signature = DBUS_TYPE_SIGNATURE;
static const int cdbus_type_unix_fd = DBUS_TYPE_UNIX_FD;
static const int cdbus_type_array = DBUS_TYPE_ARRAY;
static const int cdbus_type_variant = DBUS_TYPE_VARIANT;
static const int cdbus_type_struct = DBUS_TYPE_STRUCT;
static const int cdbus_type_dict_entry = DBUS_TYPE_DICT_ENTRY;

static const int cdbus_maximum_array_length = DBUS_MAXIMUM_ARRAY_LENGTH;

// Appends a fixed-size array of bytes; a non-variadic view of the pointer-to-pointer API.
static inline dbus_bool_t cdbus_iter_append_byte_array(DBusMessageIter *sub,
                                                       const unsigned char *bytes,
                                                       int count) {
    return dbus_message_iter_append_fixed_array(sub, DBUS_TYPE_BYTE, &bytes, count);
}

// Reads a fixed-size array of bytes (valid while the message lives).
static inline const unsigned char *cdbus_iter_get_byte_array(DBusMessageIter *sub, int *count) {
    const unsigned char *bytes = NULL;
    dbus_message_iter_get_fixed_array(sub, &bytes, count);
    return bytes;
}

#endif
