/* drivers/sys.h: the syscall seam. Every open/close/ioctl/mmap/munmap of a
 * driver file and every sysfs read goes through the active table: libc by
 * default, the mock GPU under HCQ_MOCK=1, either one wrapped by the tracer
 * under HCQ_TRACE=1. Nothing outside drivers/sys.c calls these syscalls. */
#ifndef HCQ_DRIVERS_SYS_H
#define HCQ_DRIVERS_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct hcq_sys {
    const char *name; /* "libc", "mock", "trace(libc)" */
    /* each returns >= 0 on success or -errno */
    int (*open)(void *ctx, const char *path, int flags);
    int (*close)(void *ctx, int fd);
    int (*ioctl)(void *ctx, int fd, unsigned long request, void *arg);
    /* returns the address, or NULL with *err = errno */
    void *(*mmap)(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t offset, int *err);
    int (*munmap)(void *ctx, void *addr, size_t len);
    /* reads a whole small file (sysfs) into buf (NUL-terminated); bytes or -errno */
    ssize_t (*read_file)(void *ctx, const char *path, char *buf, size_t size);
    /* calls fn for each entry name of a directory; 0 or -errno */
    int (*list_dir)(void *ctx, const char *path, void (*fn)(void *arg, const char *name), void *arg);
    /* 0 if path exists, else -errno */
    int (*exists)(void *ctx, const char *path);
    /* Optional hooks for emulated hardware (NULL in the libc table):
     * the host just stored a doorbell at addr (sys_doorbell32/64 made the
     * store); the host wrote memory that engines may be waiting on (a
     * signal); engine progress, so host waiters sleep until an engine
     * releases a semaphore instead of polling. */
    void (*doorbell)(void *ctx, volatile void *addr);
    void (*notify)(void *ctx, uint64_t va);
    uint64_t (*progress_seq)(void *ctx);
    void (*progress_wait)(void *ctx, uint64_t seq, uint64_t max_ns);
    void *ctx;
} hcq_sys;

/* The active table: chosen on first use (HCQ_MOCK, HCQ_TRACE), changeable by
 * tests and tools. */
const hcq_sys *sys_get(void);
/* Installs a table (NULL restores the default choice); returns the old one. */
const hcq_sys *sys_set(const hcq_sys *s);
/* The plain libc table. */
const hcq_sys *sys_libc(void);
/* libhcqmock.so is preloaded: the device files are emulated behind libc. */
bool sys_mock_preloaded(void);
/* The functions the libc table calls (libc's by default). A library that
 * interposes them binds the next ones (dlsym RTLD_NEXT) so its own calls
 * through the table skip it. */
typedef struct sys_libc_calls {
    int (*open)(const char *, int, ...);
    int (*close)(int);
    int (*ioctl)(int, unsigned long, ...);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    int (*munmap)(void *, size_t);
    int (*access)(const char *, int);
    struct __dirstream *(*opendir)(const char *);
} sys_libc_calls;
void sys_libc_bind(const sys_libc_calls *calls);

/* Calls once(arg) until it returns something other than -EINTR or -EAGAIN;
 * -EAGAIN is retried with growing pauses (10 us to 1 ms) for at most
 * HCQ_TIMEOUT_MS and then returned. The libc table's ioctl runs on it. */
int sys_retry(int (*once)(void *arg), void *arg);

/* Convenience wrappers over the active table (restart on EINTR). */
int sys_open(const char *path, int flags);
int sys_close(int fd);
int sys_ioctl(int fd, unsigned long request, void *arg);
void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset, int *err);
int sys_munmap(void *addr, size_t len);
ssize_t sys_read_file(const char *path, char *buf, size_t size);
int sys_list_dir(const char *path, void (*fn)(void *arg, const char *name), void *arg);
int sys_exists(const char *path);

/* Doorbells: a full barrier (earlier writes to rings and USERD must land
 * first), the store, then the table's doorbell hook. */
void sys_doorbell32(volatile uint32_t *addr, uint32_t value);
void sys_doorbell64(volatile uint64_t *addr, uint64_t value);
/* Emulated engines that read a doorbell through a mapping of their own
 * call this after the read: sys_doorbell* bump an epoch with a release
 * before their store, so the engine's acquire here orders everything the
 * host wrote before ringing (rings, packets) before what the engine reads
 * next, also for ThreadSanitizer, which cannot relate two mappings. */
void sys_doorbell_acquire(void);

/* What to do about a device node that open refused with err (-errno or
 * errno): for EACCES/EPERM, "; it is mode 0600, group root; add your user to
 * the `group` group (...)" into buf; other errors leave buf empty. */
void sys_open_hint(const char *path, int err, const char *group, char *buf, size_t size);

/* The host wrote memory engines may wait on. */
void sys_notify(uint64_t va);

/* Shared memory that keeps no descriptor (the mock's buffer objects): a
 * memfd of len bytes mapped once, PROT_NONE (the anchor), and closed at
 * once, so nothing of it sits in the descriptor table for a program to
 * close, dup2 over or reuse (a daemon's close-everything loop then had the
 * mock write into the program's own file). Mappings of its pages are made
 * from the anchor (mremap with old size 0, which duplicates a shared
 * mapping); the pages go when the anchor and every mapping are gone.
 * NULL + *err on failure. */
void *sys_shm_create(const char *name, size_t len, int *err);
/* [off, off + len) of the object at anchor, mapped with prot at addr
 * (replacing what is there) or where the kernel chooses (addr NULL) */
void *sys_shm_map(void *anchor, uint64_t off, size_t len, void *addr, int prot, int *err);
void sys_shm_destroy(void *anchor, size_t len);

/* Anonymous host memory, page-aligned and zeroed, through the seam so the
 * mock and the tracer account for it. NULL + *err on failure. */
void *sys_anon_map(size_t len, int *err);
int sys_anon_unmap(void *p, size_t len);

/* Status pages (queue/status.c, read by `hcq top`): a file of len bytes
 * at path, created with mode 0600 (an existing one is replaced), zeroed and
 * mapped shared, inside dir, which is created with mode 0700 when missing
 * and refused when another user owns it or others can write it. These go to
 * libc directly, not through the active table: the file is not a driver's,
 * so neither the mock nor the tracer should see it. NULL + *err (errno). */
void *sys_status_map(const char *dir, const char *path, size_t len, int *err);
/* unmaps it and removes the file */
void sys_status_unmap(void *p, size_t len, const char *path);

/* A thread's alternate signal stack (the CPU device's kernel workers): len
 * bytes of anonymous memory above a PROT_NONE guard page, so a handler that
 * overflows it faults instead of writing into whatever lies below. Not a
 * driver's memory: libc directly, as the status pages. NULL + *err (errno).
 * sys_sigstack_unmap takes what sys_sigstack_map returned. */
void *sys_sigstack_map(size_t len, int *err);
void sys_sigstack_unmap(void *p, size_t len);

#endif
