// Static inline wrappers for the parts of libgcrypt Swift cannot call directly
// (variadic functions and macros). Nothing else belongs here.
#ifndef COFFER_CGCRYPT_SHIM_H
#define COFFER_CGCRYPT_SHIM_H
#include <gcrypt.h>
#endif
