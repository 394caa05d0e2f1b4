// The GNU extensions declared in include/cprocess.h.
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>
#include "cprocess.h"

int cprocess_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int cprocess_spawn_add_closefrom(posix_spawn_file_actions_t *actions, int lowest) {
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
#else
    (void)actions; (void)lowest;
    return ENOSYS;
#endif
}

int cprocess_spawn_add_chdir(posix_spawn_file_actions_t *actions, const char *path) {
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 29)
    return posix_spawn_file_actions_addchdir_np(actions, path);
#else
    (void)actions; (void)path;
    return ENOSYS;
#endif
}

short cprocess_spawn_setsid_flag(void) {
#ifdef POSIX_SPAWN_SETSID
    return POSIX_SPAWN_SETSID;
#else
    return 0;
#endif
}

int cprocess_unix_datagram_socket(const char *path, int bound) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    size_t length = strlen(path);
    if (length == 0 || length >= sizeof address.sun_path) { errno = ENAMETOOLONG; return -1; }
    memcpy(address.sun_path, path, length);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | (bound ? 0 : SOCK_NONBLOCK), 0);
    if (fd < 0) return -1;
    int rc = bound ? bind(fd, (struct sockaddr *)&address, sizeof address)
                   : connect(fd, (struct sockaddr *)&address, sizeof address);
    if (rc != 0) { int saved = errno; close(fd); errno = saved; return -1; }
    return fd;
}

int cprocess_identity(int directory, const char *path, unsigned long long *device,
                      unsigned long long *inode, long long *size) {
    int flags = path[0] == 0 ? AT_EMPTY_PATH : 0;
    struct statx info;
    if (statx(directory, path, flags, STATX_INO | STATX_SIZE, &info) == 0) {
        *device = makedev(info.stx_dev_major, info.stx_dev_minor);
        *inode = info.stx_ino;
        *size = (long long)info.stx_size;
        return 0;
    }
    if (errno != ENOSYS) return -1;
    struct stat fallback;
    if (fstatat(directory, path, &fallback, flags) != 0) return -1;
    *device = fallback.st_dev;
    *inode = fallback.st_ino;
    *size = fallback.st_size;
    return 0;
}

/// `count` pointers into the strings laid end to end in `block`, and a NULL: malloc'd.
static char **pointers_into(const char *block, size_t count) {
    char **pointers = calloc(count + 1, sizeof *pointers);
    if (pointers == NULL) return NULL;
    for (size_t i = 0; i < count; i++) {
        pointers[i] = (char *)block;
        block += strlen(block) + 1;
    }
    return pointers;
}

int cprocess_spawn(pid_t *child, const char *path, const posix_spawn_file_actions_t *actions,
                   const posix_spawnattr_t *attributes, const char *arguments, size_t argc,
                   const char *environment, size_t envc) {
    char **argv = pointers_into(arguments, argc);
    char **envp = pointers_into(environment, envc);
    int code = (argv == NULL || envp == NULL) ? ENOMEM
             : posix_spawn(child, path, actions, attributes, argv, envp);
    free(argv);
    free(envp);
    return code;
}

int cprocess_next_entry_name(DIR *directory, char *name, size_t size) {
    errno = 0;
    struct dirent *entry = readdir(directory);
    if (entry == NULL) return errno == 0 ? 0 : -1;
    size_t length = strlen(entry->d_name);
    if (length >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(name, entry->d_name, length + 1);
    return 1;
}

int cprocess_home_directory(uid_t uid, char *home, size_t size) {
    struct passwd record, *found = NULL;
    char buffer[4096];
    if (getpwuid_r(uid, &record, buffer, sizeof buffer, &found) != 0 || found == NULL || record.pw_dir == NULL) return -1;
    size_t length = strlen(record.pw_dir);
    if (length >= size) return -1;
    memcpy(home, record.pw_dir, length + 1);
    return 0;
}
