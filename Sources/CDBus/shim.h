// Static inline wrappers for the parts of libdbus-1 Swift cannot call directly
// (variadic functions and type-code macros). Nothing else belongs here.
#ifndef COFFER_CDBUS_SHIM_H
#define COFFER_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
