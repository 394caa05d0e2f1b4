// tpm2-tss, the TPM 2.0 software stack: the Enhanced System API, the TCTI loader (which reaches
// /dev/tpmrm0, or swtpm in the tests), marshalling and response-code text. Nothing else.
#ifndef COFFER_CTSS2_SHIM_H
#define COFFER_CTSS2_SHIM_H
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>
#endif
