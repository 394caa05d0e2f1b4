// libpam for pam_coffer: the calls Swift cannot make safely itself. The password never enters
// Swift: it is kept by libpam (pam_set_data, wiped by its cleanup) and written from here
// straight into a pipe.
#include <security/pam_modules.h>
#include <security/pam_ext.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <errno.h>
#include <pwd.h>
#include <syslog.h>

#define CPAM_STASH "coffer-authtok"

static void cpam_wipe_and_free(pam_handle_t *pamh, void *data, int status) {
    (void)pamh; (void)status;
    if (data) { explicit_bzero(data, strlen((char *)data)); free(data); }
}

/// Keeps a copy of the password the user typed (PAM_AUTHTOK) for the session to come.
static inline int cpam_stash_authtok(pam_handle_t *pamh) {
    const char *token = NULL;
    int rc = pam_get_authtok(pamh, PAM_AUTHTOK, &token, NULL);
    if (rc != PAM_SUCCESS || token == NULL) return rc == PAM_SUCCESS ? PAM_AUTHTOK_ERR : rc;
    char *copy = strdup(token);
    if (copy == NULL) return PAM_BUF_ERR;
    return pam_set_data(pamh, CPAM_STASH, copy, cpam_wipe_and_free);
}

static inline int cpam_write_all(int fd, const char *text, size_t length) {
    while (length > 0) {
        ssize_t n = write(fd, text, length);
        if (n < 0) { if (errno == EINTR) continue; return -1; }
        text += n; length -= (size_t)n;
    }
    return 0;
}

/// Writes `text` and a newline to `fd`: 0, or -1 on an error.
static inline int cpam_write_line(int fd, const char *text) {
    if (cpam_write_all(fd, text, strlen(text)) != 0) return -1;
    return cpam_write_all(fd, "\n", 1);
}

/// Writes the stashed password and a newline to `fd`: 0; 1 when there is none; -1 on an error.
static inline int cpam_write_stashed(pam_handle_t *pamh, int fd) {
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
static inline int cpam_stash_old_authtok(pam_handle_t *pamh, int may_ask) {
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
static inline int cpam_write_old_and_new(pam_handle_t *pamh, int fd) {
    const void *old = NULL;
    const char *new = NULL;
    if (pam_get_data(pamh, CPAM_OLD_STASH, &old) != PAM_SUCCESS || old == NULL) return 1;
    if (pam_get_authtok(pamh, PAM_AUTHTOK, &new, NULL) != PAM_SUCCESS || new == NULL) return 1;
    if (cpam_write_line(fd, (const char *)old) != 0) return -1;
    return cpam_write_line(fd, new);
}

/// The module's arguments as libpam hands them over (`const char **argv`), opaque to Swift:
/// it only passes them back here.
typedef struct cpam_arguments cpam_arguments;

/// Copies `text` and its NUL into `out` (`size` bytes): its length, or -1 when it is NULL or
/// does not fit.
static inline int cpam_copy(const char *text, char *out, size_t size) {
    if (text == NULL) return -1;
    size_t length = strlen(text);
    if (length + 1 > size || length > 0x7fffffff) return -1;
    memcpy(out, text, length + 1);
    return (int)length;
}

/// Copies module argument `index` of `argc` into `out`: as `cpam_copy`.
static inline int cpam_argument(const cpam_arguments *argv, int argc, int index, char *out, size_t size) {
    if (argv == NULL || index < 0 || index >= argc) return -1;
    return cpam_copy(((const char *const *)argv)[index], out, size);
}

/// Copies the name of the user being logged in into `out`: as `cpam_copy`.
static inline int cpam_user(pam_handle_t *pamh, char *out, size_t size) {
    const char *user = NULL;
    if (pam_get_user(pamh, &user, NULL) != PAM_SUCCESS) return -1;
    return cpam_copy(user, out, size);
}

/// Copies a variable of the PAM environment (what the session will get), else of this process,
/// into `out`: as `cpam_copy` (-1 also when it is set in neither).
static inline int cpam_environment(pam_handle_t *pamh, const char *name, char *out, size_t size) {
    const char *value = pam_getenv(pamh, name);
    return cpam_copy(value != NULL ? value : getenv(name), out, size);
}

/// The user's uid and gid, and their home copied into `home` (`size` bytes): the home's
/// length, or -1 when unknown or too long.
static inline int cpam_account(const char *user, uid_t *uid, gid_t *gid, char *home, size_t size) {
    struct passwd entry, *found = NULL;
    char buffer[4096];
    if (getpwnam_r(user, &entry, buffer, sizeof buffer, &found) != 0 || found == NULL) return -1;
    *uid = entry.pw_uid; *gid = entry.pw_gid;
    return cpam_copy(entry.pw_dir, home, size);
}

/// One warning line in the system log (never a secret).
static inline void cpam_warn(pam_handle_t *pamh, const char *message) {
    pam_syslog(pamh, LOG_WARNING, "%s", message);
}
