// libpam's headers, for pam_coffer's C side (CPAMCalls), which alone calls libpam.
#include <security/pam_modules.h>
#include <security/pam_ext.h>
