// pam_coffer's C side (cpam_calls.c): libpam's entry points, which keep libpam's handle and
// the module's arguments for the length of one call, and the calls Swift makes back during
// it. None takes or returns a pointer Swift must hold; strings are copied into its buffers.
#ifndef COFFER_CPAM_CALLS_H
#define COFFER_CPAM_CALLS_H
#include <stddef.h>
#include <sys/types.h>

// Implemented in Swift (PAMCoffer), called by the entry points.

/// pam_sm_authenticate: keeps the password typed; nonzero if it was kept.
int coffer_pam_authenticate(void);
/// pam_sm_open_session: unlocks the login collection.
void coffer_pam_open_session(void);
/// pam_sm_chauthtok: phase 1 checks (PAM_PRELIM_CHECK), phase 2 changes (PAM_UPDATE_AUTHTOK).
void coffer_pam_chauthtok(int phase);

// For Swift, during a call (hidden: not part of what pam_coffer.so exports). Copies return
// the string's length, or -1 when there is none or it does not fit `size` bytes with its NUL.
#define CPAM_HIDDEN __attribute__((visibility("hidden")))

/// How many arguments the module has in the PAM configuration.
CPAM_HIDDEN int cpam_argument_count(void);
/// Copies argument `index` (`name` or `name=value`) into `out`.
CPAM_HIDDEN int cpam_argument(int index, char *out, size_t size);
/// Copies the name of the user being logged in into `out`.
CPAM_HIDDEN int cpam_user(char *out, size_t size);
/// Copies a variable of the PAM environment (what the session will get), else of this process.
CPAM_HIDDEN int cpam_environment(const char *name, char *out, size_t size);
/// The user's uid and gid, and their home copied into `home`.
CPAM_HIDDEN int cpam_account(const char *user, uid_t *uid, gid_t *gid, char *home, size_t size);
/// One warning line in the system log (never a secret).
CPAM_HIDDEN void cpam_warn(const char *message);
/// Keeps a copy of the password the user typed for the session to come: 0, or a PAM error.
CPAM_HIDDEN int cpam_stash_authtok(void);
/// Whether a password was stashed at authentication: 1, else 0.
CPAM_HIDDEN int cpam_has_stashed(void);
/// Writes the stashed password and a newline to `fd`: 0; 1 when there is none; -1 on an error.
CPAM_HIDDEN int cpam_write_stashed(int fd);
/// Keeps the current password for a change to come (asked only if `may_ask`): 0; 1 when it
/// cannot be had.
CPAM_HIDDEN int cpam_stash_old_authtok(int may_ask);
/// Writes the old password then the new one, each with a newline, to `fd`: 0; 1 when either
/// cannot be had; -1 on an error.
CPAM_HIDDEN int cpam_write_old_and_new(int fd);

#endif
