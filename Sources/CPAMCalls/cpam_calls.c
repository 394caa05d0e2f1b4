// pam_coffer's C side. libpam's entry points (pam_sm_*) keep the handle and the module's
// arguments in `current` for the length of the call and hand over to Swift without them; the
// calls Swift makes back read them from there, so no pointer crosses into Swift. The password
// never enters Swift either: it is kept by libpam (pam_set_data, wiped by its cleanup) and
// written from here straight into a pipe.
#include "cpam_calls.h"
#include <security/pam_modules.h>
#include <security/pam_ext.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <errno.h>
#include <pwd.h>
#include <syslog.h>

/// The call libpam is making on this thread (libpam calls a module from one thread at a time
/// per handle; another thread's call has its own).
static __thread struct {
    pam_handle_t *pamh;
    int argc;
    const char **argv;
} current;

/// Runs `body` with libpam's handle and arguments kept in `current`; PAM_IGNORE without a handle.
#define CPAM_WITH_CALL(pamh_, argc_, argv_, body) do { \
        if ((pamh_) == NULL) return PAM_IGNORE; \
        current.pamh = (pamh_); current.argc = (argc_); current.argv = (argv_); \
        int cpam_result_ = (body); \
        current.pamh = NULL; current.argc = 0; current.argv = NULL; \
        return cpam_result_; \
    } while (0)

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    // Only keeps the password: authenticating is the other modules' job.
    CPAM_WITH_CALL(pamh, argc, argv, coffer_pam_authenticate() ? PAM_SUCCESS : PAM_IGNORE);
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh; (void)flags; (void)argc; (void)argv;
    return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    // Never keeps a login out: a failure is logged.
    CPAM_WITH_CALL(pamh, argc, argv, (coffer_pam_open_session(), PAM_SUCCESS));
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh; (void)flags; (void)argc; (void)argv;
    return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    // libpam calls twice: first to check (PAM_PRELIM_CHECK), then to change. Never in the way
    // of the change itself: a failure is logged.
    int phase = (flags & PAM_PRELIM_CHECK) ? 1 : (flags & PAM_UPDATE_AUTHTOK) ? 2 : 0;
    if (phase == 0) return PAM_SUCCESS;
    CPAM_WITH_CALL(pamh, argc, argv, (coffer_pam_chauthtok(phase), PAM_SUCCESS));
}

#define CPAM_STASH "coffer-authtok"

static void cpam_wipe_and_free(pam_handle_t *pamh, void *data, int status) {
    (void)pamh; (void)status;
    if (data) { explicit_bzero(data, strlen((char *)data)); free(data); }
}

/// Keeps a copy of the password the user typed (PAM_AUTHTOK) for the session to come.
int cpam_stash_authtok(void) {
    pam_handle_t *pamh = current.pamh;
    const char *token = NULL;
    int rc = pam_get_authtok(pamh, PAM_AUTHTOK, &token, NULL);
    if (rc != PAM_SUCCESS || token == NULL) return rc == PAM_SUCCESS ? PAM_AUTHTOK_ERR : rc;
    char *copy = strdup(token);
    if (copy == NULL) return PAM_BUF_ERR;
    return pam_set_data(pamh, CPAM_STASH, copy, cpam_wipe_and_free);
}

static int cpam_write_all(int fd, const char *text, size_t length) {
    while (length > 0) {
        ssize_t n = write(fd, text, length);
        if (n < 0) { if (errno == EINTR) continue; return -1; }
        text += n; length -= (size_t)n;
    }
    return 0;
}

/// Writes `text` and a newline to `fd`: 0, or -1 on an error.
static int cpam_write_line(int fd, const char *text) {
    if (cpam_write_all(fd, text, strlen(text)) != 0) return -1;
    return cpam_write_all(fd, "\n", 1);
}

/// Whether a password was stashed at authentication: 1, else 0.
int cpam_has_stashed(void) {
    const void *data = NULL;
    return pam_get_data(current.pamh, CPAM_STASH, &data) == PAM_SUCCESS && data != NULL;
}

/// Writes the stashed password and a newline to `fd`: 0; 1 when there is none; -1 on an error.
int cpam_write_stashed(int fd) {
    pam_handle_t *pamh = current.pamh;
    const void *data = NULL;
    if (pam_get_data(pamh, CPAM_STASH, &data) != PAM_SUCCESS || data == NULL) return 1;
    return cpam_write_line(fd, (const char *)data);
}

#define CPAM_OLD_STASH "coffer-old-authtok"

/// Keeps a copy of the current password in a password change's first phase (PAM_PRELIM_CHECK):
/// the one an earlier module of the stack took (pam_unix), else asked here. Modules later in the
/// stack may wipe the item (pam_matrix does), so the update phase uses this copy. Returns 0; 1
/// when it cannot be had (root changing another user's password knows no old password: nothing
/// is asked then).
int cpam_stash_old_authtok(int may_ask) {
    pam_handle_t *pamh = current.pamh;
    const void *item = NULL;
    const char *old = NULL;
    if (pam_get_item(pamh, PAM_OLDAUTHTOK, &item) == PAM_SUCCESS && item != NULL && *(const char *)item != '\0') {
        old = item;
    } else if (!may_ask || pam_get_authtok(pamh, PAM_OLDAUTHTOK, &old, NULL) != PAM_SUCCESS || old == NULL) {
        return 1;
    }
    char *copy = strdup(old);
    if (copy == NULL) return 1;
    return pam_set_data(pamh, CPAM_OLD_STASH, copy, cpam_wipe_and_free) == PAM_SUCCESS ? 0 : 1;
}

/// Writes the old password then the new one, each with a newline, to `fd`: the old one kept in
/// the first phase, the new one another module of the stack took (pam_unix), else asked here
/// (pam_get_authtok asks twice): 0; 1 when either cannot be had; -1 on an error.
int cpam_write_old_and_new(int fd) {
    pam_handle_t *pamh = current.pamh;
    const void *old = NULL;
    const char *new = NULL;
    if (pam_get_data(pamh, CPAM_OLD_STASH, &old) != PAM_SUCCESS || old == NULL) return 1;
    if (pam_get_authtok(pamh, PAM_AUTHTOK, &new, NULL) != PAM_SUCCESS || new == NULL) return 1;
    if (cpam_write_line(fd, (const char *)old) != 0) return -1;
    return cpam_write_line(fd, new);
}

/// Copies `text` and its NUL into `out` (`size` bytes): its length, or -1 when it is NULL or
/// does not fit.
static int cpam_copy(const char *text, char *out, size_t size) {
    if (text == NULL) return -1;
    size_t length = strlen(text);
    if (length + 1 > size || length > 0x7fffffff) return -1;
    memcpy(out, text, length + 1);
    return (int)length;
}

/// Copies module argument `index` into `out`: as `cpam_copy`.
int cpam_argument(int index, char *out, size_t size) {
    if (current.argv == NULL || index < 0 || index >= current.argc) return -1;
    return cpam_copy(current.argv[index], out, size);
}

int cpam_argument_count(void) { return current.argc > 0 ? current.argc : 0; }

/// Copies the name of the user being logged in into `out`: as `cpam_copy`.
int cpam_user(char *out, size_t size) {
    const char *user = NULL;
    if (pam_get_user(current.pamh, &user, NULL) != PAM_SUCCESS) return -1;
    return cpam_copy(user, out, size);
}

/// Copies a variable of the PAM environment (what the session will get), else of this process,
/// into `out`: as `cpam_copy` (-1 also when it is set in neither).
int cpam_environment(const char *name, char *out, size_t size) {
    const char *value = pam_getenv(current.pamh, name);
    return cpam_copy(value != NULL ? value : getenv(name), out, size);
}

/// The user's uid and gid, and their home copied into `home` (`size` bytes): the home's
/// length, or -1 when unknown or too long.
int cpam_account(const char *user, uid_t *uid, gid_t *gid, char *home, size_t size) {
    struct passwd entry, *found = NULL;
    char buffer[4096];
    if (getpwnam_r(user, &entry, buffer, sizeof buffer, &found) != 0 || found == NULL) return -1;
    *uid = entry.pw_uid; *gid = entry.pw_gid;
    return cpam_copy(entry.pw_dir, home, size);
}

/// One warning line in the system log (never a secret).
void cpam_warn(const char *message) {
    pam_syslog(current.pamh, LOG_WARNING, "%s", message);
}
