// tpm2-tss, the TPM 2.0 software stack (the Enhanced System API, the TCTI loader that reaches
// /dev/tpmrm0 or, in the tests, swtpm, marshalling, response-code text), loaded when a TPM is
// first used rather than linked: a cofferd that never uses one maps none of it (nor the
// OpenSSL it brings). Each function is reached through a pointer of its own declared type, in
// the table ctss2_load() fills.
#ifndef COFFER_CTSS2_H
#define COFFER_CTSS2_H
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#define CTSS2_FUNCTIONS(X) \
    X(Esys_Initialize) X(Esys_Finalize) X(Esys_Free) X(Esys_FlushContext) X(Esys_CreatePrimary) \
    X(Esys_Create) X(Esys_Load) X(Esys_Unseal) X(Esys_TR_SetAuth) X(Esys_StartAuthSession) \
    X(Esys_TRSess_SetAttributes) X(Esys_PolicyPCR) X(Esys_PolicyAuthValue) X(Esys_PolicyGetDigest) \
    X(Esys_PCR_Extend) X(Tss2_TctiLdr_Initialize) X(Tss2_TctiLdr_Finalize) X(Tss2_RC_Decode) \
    X(Tss2_MU_TPM2B_PUBLIC_Marshal) X(Tss2_MU_TPM2B_PUBLIC_Unmarshal) X(Tss2_MU_TPM2B_PRIVATE_Marshal) \
    X(Tss2_MU_TPM2B_PRIVATE_Unmarshal)

/// A pointer to each function, under its own name.
struct ctss2_functions {
#define CTSS2_MEMBER(name) __typeof__(name) *name;
    CTSS2_FUNCTIONS(CTSS2_MEMBER)
#undef CTSS2_MEMBER
};

/// Loads the libraries once (later calls give the first outcome): the table, or NULL with
/// `*failure` saying what failed (static text).
const struct ctss2_functions *ctss2_load(const char **failure);
#endif
