// Process-level calls Swift cannot make directly (prctl is variadic; the GNU extensions below
// are declared only under _GNU_SOURCE, which cprocess.c defines).
#ifndef COFFER_CPROCESS_H
#define COFFER_CPROCESS_H
#include <dirent.h>
#include <spawn.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <signal.h>

/// Sets the core size limit (soft and hard) to zero: no core file, and systemd-coredump keeps
/// nothing either. Returns 0, or -1 with errno set.
static inline int cprocess_disable_core_dumps(void) {
    struct rlimit none = { 0, 0 };
    return setrlimit(RLIMIT_CORE, &none);
}

/// Marks the process non-dumpable: other processes of the same user can no longer trace it or
/// read its memory, and its /proc/PID/exe, maps, environ and fd/ become root's.
/// Returns 0, or -1 with errno set.
static inline int cprocess_make_non_dumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/// Names the calling thread (the kernel keeps 15 bytes): what `top -H` and perf show.
static inline int cprocess_name_this_thread(const char *name) {
    return prctl(PR_SET_NAME, name, 0, 0, 0);
}

/// The type of the file system `path` lies on (statfs's `f_type`, a magic number), in
/// `*magic`. 0, or -1 with errno set.
static inline int cprocess_file_system_magic(const char *path, unsigned long *magic) {
    struct statfs info;
    int result = statfs(path, &info);
    if (result == 0) *magic = (unsigned long)info.f_type;
    return result;
}

/// Unblocks every signal in the calling thread (a parent may have started us with some blocked).
static inline int cprocess_unblock_all_signals(void) {
    sigset_t empty;
    sigemptyset(&empty);
    return sigprocmask(SIG_SETMASK, &empty, 0);
}

/// `pipe2(fds, O_CLOEXEC)`: both ends close-on-exec atomically. 0, or -1 with errno set.
int cprocess_pipe_cloexec(int fds[2]);

/// Adds "close every descriptor >= `lowest`" to spawn file actions (glibc 2.34+).
/// 0, or an error number (ENOSYS where the C library lacks it).
int cprocess_spawn_add_closefrom(posix_spawn_file_actions_t *actions, int lowest);

/// Adds "change directory to `path`" to spawn file actions (glibc 2.29+).
/// 0, or an error number (ENOSYS where the C library lacks it).
int cprocess_spawn_add_chdir(posix_spawn_file_actions_t *actions, const char *path);

/// The spawn attribute flag that starts the child in a new session (POSIX_SPAWN_SETSID,
/// glibc 2.26+), or 0 where the C library lacks it.
short cprocess_spawn_setsid_flag(void);
/// A Unix datagram socket (close-on-exec) bound at `path` (`bound` != 0) or connected to it
/// (then non-blocking: a send to a full queue fails with EAGAIN):
/// its descriptor, or -1 with errno set (ENAMETOOLONG for a path that does not fit).
int cprocess_unix_datagram_socket(const char *path, int bound);

/// Device (as `st_dev`), inode and size of the file `path` names from `directory` (`path` ""
/// and `directory` a descriptor: that file), read with statx(2) asking for nothing else: a
/// query of a file's times makes Linux 6.13+ give the next write a fine-grained time, which a
/// later fdatasync then writes to disk too. Falls back to fstatat(2) where statx is missing.
/// 0, or -1 with errno set.
int cprocess_identity(int directory, const char *path, unsigned long long *device,
                      unsigned long long *inode, long long *size);

/// posix_spawn(3) with argv and envp given as `argc` and `envc` NUL-terminated strings laid
/// end to end in `arguments` and `environment`, so that Swift need build no pointer arrays.
/// posix_spawn's result (0 or an error number); ENOMEM if the arrays cannot be made.
int cprocess_spawn(pid_t *child, const char *path, const posix_spawn_file_actions_t *actions,
                   const posix_spawnattr_t *attributes, const char *arguments, size_t argc,
                   const char *environment, size_t envc);

/// The name of the next entry of `directory` copied into `name` (`size` bytes, NUL-terminated):
/// 1, or 0 at the end, or -1 with errno set.
int cprocess_next_entry_name(DIR *directory, char *name, size_t size);

/// The home directory of the user with `uid` in the password database, copied into `home`
/// (`size` bytes, NUL-terminated): 0, or -1 when there is none or it does not fit.
int cprocess_home_directory(uid_t uid, char *home, size_t size);
#endif
