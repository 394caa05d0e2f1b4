// The GNU extensions declared in include/cprocess.h.
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include "cprocess.h"

int cprocess_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}
