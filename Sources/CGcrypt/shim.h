// Static inline wrappers for the parts of libgcrypt Swift cannot call directly
// (variadic functions and macros). Nothing else belongs here.
#ifndef COFFER_CGCRYPT_SHIM_H
#define COFFER_CGCRYPT_SHIM_H
#include <gcrypt.h>

/* ---- gcry_control (variadic) ---------------------------------------------------------- */

/// gcry_control(GCRYCTL_SET_PREFERRED_RNG_TYPE, GCRY_RNG_TYPE_SYSTEM): use the kernel RNG
/// (getrandom) directly. Call before gcry_check_version.
static inline gcry_error_t coffer_gcry_prefer_system_rng(void) {
    return gcry_control(GCRYCTL_SET_PREFERRED_RNG_TYPE, GCRY_RNG_TYPE_SYSTEM);
}

/// gcry_control(GCRYCTL_GET_CURRENT_RNG_TYPE): 1 standard CSPRNG, 2 FIPS, 3 system; 0 on error.
static inline int coffer_gcry_current_rng_type(void) {
    int type = 0;
    if (gcry_control(GCRYCTL_GET_CURRENT_RNG_TYPE, &type)) return 0;
    return type;
}

/// gcry_control(GCRYCTL_SUSPEND_SECMEM_WARN): hold back "using insecure memory" warnings.
static inline gcry_error_t coffer_gcry_suspend_secmem_warn(void) {
    return gcry_control(GCRYCTL_SUSPEND_SECMEM_WARN);
}

/// gcry_control(GCRYCTL_RESUME_SECMEM_WARN): print held-back warnings from now on.
static inline gcry_error_t coffer_gcry_resume_secmem_warn(void) {
    return gcry_control(GCRYCTL_RESUME_SECMEM_WARN);
}

/// gcry_control(GCRYCTL_DISABLE_SECMEM_WARN): never print "using insecure memory".
static inline gcry_error_t coffer_gcry_disable_secmem_warn(void) {
    return gcry_control(GCRYCTL_DISABLE_SECMEM_WARN);
}

/// gcry_control(GCRYCTL_INIT_SECMEM, bytes): create the (fixed-size, mlock'ed) secure pool.
static inline gcry_error_t coffer_gcry_init_secmem(unsigned int bytes) {
    return gcry_control(GCRYCTL_INIT_SECMEM, bytes, 0);
}

/// gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0).
static inline gcry_error_t coffer_gcry_initialization_finished(void) {
    return gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
}

/// Non-zero if some component already finished libgcrypt initialization.
static inline int coffer_gcry_initialization_finished_p(void) {
    return gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P) ? 1 : 0;
}

/* ---- function-like macros and inline functions ------------------------------------------ */

/// gcry_cipher_final(hd) (a macro over gcry_cipher_ctl).
static inline gcry_error_t coffer_gcry_cipher_final(gcry_cipher_hd_t hd) {
    return gcry_cipher_final(hd);
}

/// gpg_err_code(err): the error code part of a gcry_error_t, as a plain unsigned int.
static inline unsigned int coffer_gpg_err_code(gcry_error_t err) {
    return (unsigned int)gpg_err_code(err);
}

/// GPG_ERR_CHECKSUM (tag mismatch) as a plain unsigned int.
static const unsigned int COFFER_GPG_ERR_CHECKSUM = GPG_ERR_CHECKSUM;

/* ---- enum aliases defined as macros ------------------------------------------------------ */

static const int COFFER_GCRY_CIPHER_AES128 = GCRY_CIPHER_AES128;
static const int COFFER_GCRY_CIPHER_AES256 = GCRY_CIPHER_AES256;
static const int COFFER_GCRY_CIPHER_MODE_GCM = GCRY_CIPHER_MODE_GCM;
static const int COFFER_GCRY_CIPHER_MODE_CBC = GCRY_CIPHER_MODE_CBC;
static const unsigned int COFFER_GCRY_CIPHER_SECURE = GCRY_CIPHER_SECURE;
static const int COFFER_GCRY_MD_SHA256 = GCRY_MD_SHA256;
static const int COFFER_GCRY_MD_SHA1 = GCRY_MD_SHA1;
static const int COFFER_GCRY_MD_SHA512 = GCRY_MD_SHA512;
static const int COFFER_GCRY_MD_CRC32 = GCRY_MD_CRC32;
static const int COFFER_GCRY_MD_MD5 = GCRY_MD_MD5;
static const unsigned int COFFER_GCRY_MD_FLAG_SECURE = GCRY_MD_FLAG_SECURE;
static const unsigned int COFFER_GCRY_MD_FLAG_HMAC = GCRY_MD_FLAG_HMAC;
static const int COFFER_GCRY_KDF_ARGON2 = GCRY_KDF_ARGON2;
static const int COFFER_GCRY_KDF_ARGON2ID = GCRY_KDF_ARGON2ID;

#endif
