// flush-probe: what it costs to make a 300-byte append durable from a thread that must not
// block, four ways, timed in turn (one of each per round) so that a slow spell weighs on all:
//
//   inline           pwrite + fdatasync on the calling thread (what the floor line does)
//   leader/follower  the caller wakes another thread (which would take over the D-Bus loop),
//                    then writes and flushes itself: the wake-up is off the critical path
//   writer thread    the caller hands the write to a thread waiting on a condition variable,
//                    which writes, flushes and signals back through an eventfd (cofferd's
//                    CollectionWriter, which replies from the writer instead of signalling back)
//   io_uring         a linked write + fdatasync submitted to io_uring, completion waited for
//                    through an eventfd in poll, as an event loop would
//
// It is C because io_uring's rings are shared memory read and written with atomics, which
// Swift here could only do through unsafe pointers. Build and run with scripts/flush-probe, or:
//   cc -O2 -o flush-probe flush-probe.c -lpthread && ./flush-probe [FILE] [ROUNDS]
// Prints the median microseconds of each way.
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { recordSize = 300, fileSpan = 8 << 20 };
static char record[recordSize];
static int file;
static off_t offset;

static long nanoseconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void fail(const char *what) {
    perror(what);
    exit(1);
}

static off_t nextOffset(void) {
    offset = (offset + recordSize) % (fileSpan - recordSize);
    return offset;
}

static void appendDurably(off_t at) {
    if (pwrite(file, record, recordSize, at) != recordSize || fdatasync(file) != 0) fail("write");
}

// A thread that sleeps on a condition variable until woken, then runs `work` (if any).
struct Sleeper {
    pthread_mutex_t mutex;
    pthread_cond_t wake;
    int pending;
    int doneEvent;   // eventfd written after work, or -1
    off_t at;
    int writes;
};

static void *sleeperMain(void *argument) {
    struct Sleeper *s = argument;
    for (;;) {
        pthread_mutex_lock(&s->mutex);
        while (!s->pending) pthread_cond_wait(&s->wake, &s->mutex);
        s->pending = 0;
        off_t at = s->at;
        pthread_mutex_unlock(&s->mutex);
        if (s->writes) appendDurably(at);
        if (s->doneEvent >= 0) {
            uint64_t one = 1;
            if (write(s->doneEvent, &one, sizeof one) != sizeof one) fail("eventfd");
        }
    }
    return NULL;
}

static void wakeSleeper(struct Sleeper *s, off_t at) {
    pthread_mutex_lock(&s->mutex);
    s->pending = 1;
    s->at = at;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->mutex);
}

static void startSleeper(struct Sleeper *s, int writes, int doneEvent) {
    pthread_mutex_init(&s->mutex, NULL);
    pthread_cond_init(&s->wake, NULL);
    s->pending = 0;
    s->writes = writes;
    s->doneEvent = doneEvent;
    pthread_t thread;
    if (pthread_create(&thread, NULL, sleeperMain, s) != 0) fail("pthread_create");
}

static void waitFor(int event) {
    struct pollfd p = {event, POLLIN, 0};
    uint64_t count;
    if (poll(&p, 1, -1) != 1 || read(event, &count, sizeof count) != sizeof count) fail("wait");
}

// io_uring without liburing: one ring, completions announced on an eventfd.
static struct {
    int fd, event;
    unsigned *sqTail, *sqMask, *sqArray, *cqHead, *cqTail, *cqMask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
} ring;

static void ringSetUp(void) {
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    ring.fd = (int)syscall(__NR_io_uring_setup, 8, &p);
    if (ring.fd < 0) fail("io_uring_setup");
    char *sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_POPULATE, ring.fd, IORING_OFF_SQ_RING);
    char *cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_POPULATE, ring.fd, IORING_OFF_CQ_RING);
    ring.sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_POPULATE, ring.fd, IORING_OFF_SQES);
    if (sq == MAP_FAILED || cq == MAP_FAILED || ring.sqes == MAP_FAILED) fail("mmap");
    ring.sqTail = (unsigned *)(sq + p.sq_off.tail);
    ring.sqMask = (unsigned *)(sq + p.sq_off.ring_mask);
    ring.sqArray = (unsigned *)(sq + p.sq_off.array);
    ring.cqHead = (unsigned *)(cq + p.cq_off.head);
    ring.cqTail = (unsigned *)(cq + p.cq_off.tail);
    ring.cqMask = (unsigned *)(cq + p.cq_off.ring_mask);
    ring.cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    ring.event = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (syscall(__NR_io_uring_register, ring.fd, IORING_REGISTER_EVENTFD, &ring.event, 1) != 0) fail("register eventfd");
}

static void ringPush(int opcode, int flags, off_t at) {
    unsigned tail = atomic_load_explicit((_Atomic unsigned *)ring.sqTail, memory_order_relaxed);
    unsigned index = tail & *ring.sqMask;
    struct io_uring_sqe *e = &ring.sqes[index];
    memset(e, 0, sizeof *e);
    e->opcode = (uint8_t)opcode;
    e->fd = file;
    e->flags = (uint8_t)flags;
    if (opcode == IORING_OP_WRITE) {
        e->addr = (uint64_t)(uintptr_t)record;
        e->len = recordSize;
        e->off = (uint64_t)at;
    } else {
        e->fsync_flags = IORING_FSYNC_DATASYNC;
    }
    ring.sqArray[index] = index;
    atomic_store_explicit((_Atomic unsigned *)ring.sqTail, tail + 1, memory_order_release);
}

static void ringAppendDurably(off_t at) {
    ringPush(IORING_OP_WRITE, IOSQE_IO_LINK, at);
    ringPush(IORING_OP_FSYNC, 0, 0);
    if (syscall(__NR_io_uring_enter, ring.fd, 2, 0, 0, NULL, 0) != 2) fail("io_uring_enter");
    for (unsigned done = 0; done < 2;) {
        waitFor(ring.event);
        unsigned head = *ring.cqHead;
        unsigned tail = atomic_load_explicit((_Atomic unsigned *)ring.cqTail, memory_order_acquire);
        for (; head != tail; head++, done++) {
            if (ring.cqes[head & *ring.cqMask].res < 0) fail("io_uring completion");
        }
        atomic_store_explicit((_Atomic unsigned *)ring.cqHead, head, memory_order_release);
    }
}

static int byValue(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static long medianMicroseconds(long *samples, int count) {
    qsort(samples, (size_t)count, sizeof *samples, byValue);
    return samples[count / 2] / 1000;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "flush-probe.data";
    int rounds = argc > 2 ? atoi(argv[2]) : 400;
    if (rounds < 1) rounds = 400;
    file = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (file < 0) fail(path);
    memset(record, 'x', recordSize);
    static char zeros[fileSpan];
    if (pwrite(file, zeros, fileSpan, 0) != fileSpan || fsync(file) != 0) fail("preallocate");

    struct Sleeper follower, writer;
    int writerDone = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    startSleeper(&follower, 0, -1);
    startSleeper(&writer, 1, writerDone);
    ringSetUp();

    long *inline_ = calloc((size_t)rounds, sizeof(long)), *leader = calloc((size_t)rounds, sizeof(long));
    long *handoff = calloc((size_t)rounds, sizeof(long)), *uring = calloc((size_t)rounds, sizeof(long));
    for (int i = 0; i < rounds; i++) {
        long start = nanoseconds();
        appendDurably(nextOffset());
        inline_[i] = nanoseconds() - start;

        start = nanoseconds();
        wakeSleeper(&follower, 0);
        appendDurably(nextOffset());
        leader[i] = nanoseconds() - start;

        start = nanoseconds();
        wakeSleeper(&writer, nextOffset());
        waitFor(writerDone);
        handoff[i] = nanoseconds() - start;

        start = nanoseconds();
        ringAppendDurably(nextOffset());
        uring[i] = nanoseconds() - start;
    }
    printf("median µs of %d rounds: inline %ld  leader/follower %ld  writer thread %ld  io_uring %ld\n", rounds,
           medianMicroseconds(inline_, rounds), medianMicroseconds(leader, rounds),
           medianMicroseconds(handoff, rounds), medianMicroseconds(uring, rounds));
    unlink(path);
    return 0;
}
