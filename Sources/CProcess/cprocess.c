// C target holding only the header-only shim in include/cprocess.h.
