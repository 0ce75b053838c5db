// The power-cut recorder, loaded with LD_PRELOAD into a child of the battery's `power-cut`
// part: it passes every call on to the C library and logs, for the files under
// $POWERCUT_DIR (lock files left out), each write with its bytes, each flush, each truncation
// and each rename, in the order they returned, to $POWERCUT_LOG. The battery then builds the
// files a power cut at any point of that log could leave (`PowerCut.swift`).
//
// A record is a header (kind, flags, inode, offset, length; little-endian) and, for writes,
// opens and renames, `length` bytes: the data written, the file's path, "from\0to".
// Calls are logged after they return, under one lock held across the call, so that the log's
// order is the order in which they took effect. Writes through a shared writable map are not
// seen: LMDB writes its file with write calls unless opened with MDB_WRITEMAP, which LMDBRealm
// never sets; an msync is logged, and the battery fails a log that holds one.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

enum { OPENED = 1, WROTE = 2, FLUSHED = 3, TRUNCATED = 4, MARKED = 5, FLUSHED_ALL = 6, RENAMED = 7, MAP_FLUSHED = 8 };
enum { DURABLE_WRITE = 1 };  // the write's file descriptor was opened with O_DSYNC or O_SYNC

struct header { uint32_t kind, flags; uint64_t inode, offset, length; };

#define MAX_FD 65536
static struct { uint64_t inode; int dsync; int tracked; } files[MAX_FD];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1;
static char folder[PATH_MAX];
static size_t folder_length;

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off_t);
static int (*real_msync)(void *, size_t, int);
static void (*real_sync)(void);
static int (*real_syncfs)(int);
static int (*real_rename)(const char *, const char *);
static int (*real_renameat)(int, const char *, int, const char *);

static void write_all(const void *bytes, size_t count) {
    const char *p = bytes;
    while (count > 0) {
        ssize_t n = real_write(log_fd, p, count);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { perror("powercut: writing the log"); abort(); }
        p += n;
        count -= (size_t)n;
    }
}

static void record(uint32_t kind, uint32_t flags, uint64_t inode, uint64_t offset, const void *payload, uint64_t length) {
    struct header h = { kind, flags, inode, offset, length };
    write_all(&h, sizeof h);
    if (length > 0) write_all(payload, length);
}

__attribute__((constructor)) static void start(void) {
#define FIND(name) real_##name = dlsym(RTLD_NEXT, #name)
    FIND(open); FIND(open64); FIND(openat); FIND(openat64); FIND(close); FIND(write); FIND(writev); FIND(pwrite);
    FIND(pwrite64); FIND(pwritev); FIND(fsync); FIND(fdatasync); FIND(ftruncate); FIND(ftruncate64); FIND(msync);
    FIND(sync); FIND(syncfs); FIND(rename); FIND(renameat);
#undef FIND
    const char *dir = getenv("POWERCUT_DIR"), *path = getenv("POWERCUT_LOG");
    if (!dir || !path) return;
    if (!realpath(dir, folder)) { perror("powercut: POWERCUT_DIR"); abort(); }
    folder_length = strlen(folder);
    log_fd = real_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) { perror("powercut: POWERCUT_LOG"); abort(); }
}

static int inside(const char *path) {
    return strncmp(path, folder, folder_length) == 0 && path[folder_length] == '/';
}

/// Starts tracking `fd` if it names a file under the folder other than a lock file.
static void opened(int fd, int flags) {
    if (log_fd < 0 || fd < 0 || fd >= MAX_FD) return;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return;
    path[n] = 0;
    size_t length = (size_t)n;
    if (!inside(path) || (length >= 5 && strcmp(path + length - 5, "-lock") == 0)) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
    pthread_mutex_lock(&lock);
    files[fd].inode = (uint64_t)st.st_ino;
    files[fd].dsync = (flags & O_DSYNC) != 0;
    files[fd].tracked = 1;
    record(OPENED, 0, (uint64_t)st.st_ino, 0, path, length);
    if (flags & O_TRUNC) record(TRUNCATED, 0, (uint64_t)st.st_ino, 0, NULL, 0);
    pthread_mutex_unlock(&lock);
}

static int tracked(int fd) { return log_fd >= 0 && fd >= 0 && fd < MAX_FD && files[fd].tracked; }

static mode_t mode_argument(int flags, va_list arguments) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(arguments, int) : 0;
}

int open(const char *path, int flags, ...) {
    va_list a; va_start(a, flags); mode_t mode = mode_argument(flags, a); va_end(a);
    int fd = real_open(path, flags, mode);
    opened(fd, flags);
    return fd;
}
int open64(const char *path, int flags, ...) {
    va_list a; va_start(a, flags); mode_t mode = mode_argument(flags, a); va_end(a);
    int fd = real_open64(path, flags, mode);
    opened(fd, flags);
    return fd;
}
int openat(int dirfd, const char *path, int flags, ...) {
    va_list a; va_start(a, flags); mode_t mode = mode_argument(flags, a); va_end(a);
    int fd = real_openat(dirfd, path, flags, mode);
    opened(fd, flags);
    return fd;
}
int openat64(int dirfd, const char *path, int flags, ...) {
    va_list a; va_start(a, flags); mode_t mode = mode_argument(flags, a); va_end(a);
    int fd = real_openat64(dirfd, path, flags, mode);
    opened(fd, flags);
    return fd;
}
// The fortified forms a caller compiled with _FORTIFY_SOURCE reaches.
int __open_2(const char *path, int flags) { return open(path, flags); }
int __open64_2(const char *path, int flags) { return open64(path, flags); }
int __openat_2(int dirfd, const char *path, int flags) { return openat(dirfd, path, flags); }
int __openat64_2(int dirfd, const char *path, int flags) { return openat64(dirfd, path, flags); }

int close(int fd) {
    if (!tracked(fd)) return real_close(fd);
    pthread_mutex_lock(&lock);
    files[fd].tracked = 0;
    int result = real_close(fd);
    pthread_mutex_unlock(&lock);
    return result;
}

/// Logs the `count` bytes of `iov` written at `offset` to `fd`'s file.
static void wrote(int fd, const struct iovec *iov, int iovcnt, size_t count, off_t offset) {
    uint64_t inode = files[fd].inode;
    struct header h = { WROTE, files[fd].dsync ? DURABLE_WRITE : 0, inode, (uint64_t)offset, count };
    write_all(&h, sizeof h);
    for (int i = 0; i < iovcnt && count > 0; i++) {
        size_t part = iov[i].iov_len < count ? iov[i].iov_len : count;
        write_all(iov[i].iov_base, part);
        count -= part;
    }
}

ssize_t write(int fd, const void *bytes, size_t count) {
    if (!tracked(fd)) return real_write(fd, bytes, count);
    pthread_mutex_lock(&lock);
    ssize_t n = real_write(fd, bytes, count);
    int saved = errno;
    if (n > 0) {
        struct iovec v = { (void *)bytes, (size_t)n };
        wrote(fd, &v, 1, (size_t)n, lseek(fd, 0, SEEK_CUR) - n);
    }
    pthread_mutex_unlock(&lock);
    errno = saved;
    return n;
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
    if (!tracked(fd)) return real_writev(fd, iov, iovcnt);
    pthread_mutex_lock(&lock);
    ssize_t n = real_writev(fd, iov, iovcnt);
    int saved = errno;
    if (n > 0) wrote(fd, iov, iovcnt, (size_t)n, lseek(fd, 0, SEEK_CUR) - n);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return n;
}

static ssize_t positioned(ssize_t (*call)(int, const void *, size_t, off_t), int fd, const void *bytes, size_t count, off_t offset) {
    if (!tracked(fd)) return call(fd, bytes, count, offset);
    pthread_mutex_lock(&lock);
    ssize_t n = call(fd, bytes, count, offset);
    int saved = errno;
    if (n > 0) {
        struct iovec v = { (void *)bytes, (size_t)n };
        wrote(fd, &v, 1, (size_t)n, offset);
    }
    pthread_mutex_unlock(&lock);
    errno = saved;
    return n;
}
ssize_t pwrite(int fd, const void *bytes, size_t count, off_t offset) { return positioned(real_pwrite, fd, bytes, count, offset); }
ssize_t pwrite64(int fd, const void *bytes, size_t count, off_t offset) { return positioned(real_pwrite64, fd, bytes, count, offset); }

ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset) {
    if (!tracked(fd)) return real_pwritev(fd, iov, iovcnt, offset);
    pthread_mutex_lock(&lock);
    ssize_t n = real_pwritev(fd, iov, iovcnt, offset);
    int saved = errno;
    if (n > 0) wrote(fd, iov, iovcnt, (size_t)n, offset);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return n;
}

static int flushed(int (*call)(int), int fd) {
    if (!tracked(fd)) return call(fd);
    pthread_mutex_lock(&lock);
    int result = call(fd);
    int saved = errno;
    if (result == 0) record(FLUSHED, 0, files[fd].inode, 0, NULL, 0);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}
int fsync(int fd) { return flushed(real_fsync, fd); }
int fdatasync(int fd) { return flushed(real_fdatasync, fd); }

int msync(void *address, size_t length, int flags) {
    if (log_fd < 0) return real_msync(address, length, flags);
    pthread_mutex_lock(&lock);
    int result = real_msync(address, length, flags);
    int saved = errno;
    record(MAP_FLUSHED, 0, 0, (uint64_t)length, NULL, 0);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}

static int truncated(int (*call)(int, off_t), int fd, off_t size) {
    if (!tracked(fd)) return call(fd, size);
    pthread_mutex_lock(&lock);
    int result = call(fd, size);
    int saved = errno;
    if (result == 0) record(TRUNCATED, 0, files[fd].inode, (uint64_t)size, NULL, 0);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}
int ftruncate(int fd, off_t size) { return truncated(real_ftruncate, fd, size); }
int ftruncate64(int fd, off_t size) { return truncated(real_ftruncate64, fd, size); }

void sync(void) {
    if (log_fd < 0) { real_sync(); return; }
    pthread_mutex_lock(&lock);
    real_sync();
    record(FLUSHED_ALL, 0, 0, 0, NULL, 0);
    pthread_mutex_unlock(&lock);
}
int syncfs(int fd) {
    if (log_fd < 0) return real_syncfs(fd);
    pthread_mutex_lock(&lock);
    int result = real_syncfs(fd);
    int saved = errno;
    if (result == 0) record(FLUSHED_ALL, 0, 0, 0, NULL, 0);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}

/// Logs a rename into the folder (or one it cannot place): the battery does not model renames,
/// and fails a log that holds one rather than judge it.
static void renamed(int tofd, const char *from, const char *to) {
    char target[PATH_MAX];
    int known = (to[0] == '/' || tofd == AT_FDCWD) && realpath(to, target) != NULL;
    if (known && !inside(target)) return;
    const char *name = known ? target : to;
    size_t lf = strlen(from), lt = strlen(name);
    char *payload = malloc(lf + 1 + lt);
    if (!payload) { perror("powercut: logging a rename"); abort(); }
    memcpy(payload, from, lf + 1);
    memcpy(payload + lf + 1, name, lt);
    record(RENAMED, 0, 0, 0, payload, lf + 1 + lt);
    free(payload);
}
int rename(const char *from, const char *to) {
    if (log_fd < 0) return real_rename(from, to);
    pthread_mutex_lock(&lock);
    int result = real_rename(from, to);
    int saved = errno;
    if (result == 0) renamed(AT_FDCWD, from, to);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}
int renameat(int fromfd, const char *from, int tofd, const char *to) {
    if (log_fd < 0) return real_renameat(fromfd, from, tofd, to);
    pthread_mutex_lock(&lock);
    int result = real_renameat(fromfd, from, tofd, to);
    int saved = errno;
    if (result == 0) renamed(tofd, from, to);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}

/// Called by the child after commit `n` returned: what the log holds before this record must
/// keep commit `n` through any power cut.
void lmdbrealm_powercut_mark(uint64_t n) {
    if (log_fd < 0) return;
    pthread_mutex_lock(&lock);
    record(MARKED, 0, 0, n, NULL, 0);
    pthread_mutex_unlock(&lock);
}
