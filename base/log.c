#include "base/base.h"

#include <errno.h>
#include <sched.h>
#include <time.h>

void base_log(int level, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* one fprintf per line, so lines from threads do not interleave */
    fprintf(stderr, "hcq[%d] %s\n", level, line);
}

uint64_t hcq_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void base_sleep_ns(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

void base_spin_begin(base_spin *sp)
{
    sp->start = 0;
    sp->budget_ns = base_env_spin_ns();
}

bool base_spin_step(base_spin *sp)
{
    uint64_t now = hcq_now_ns();
    if (!sp->start) sp->start = now;
    uint64_t t = now - sp->start;
    if (t >= sp->budget_ns) return false;
    if (t < BASE_SPIN_PAUSE_NS) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    } else {
        sched_yield();
    }
    return true;
}

const char *base_fmt_bytes(char *buf, size_t size, uint64_t bytes)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    unsigned u = 0;
    while (v >= 1024.0 && u + 1 < BASE_ARRAY_LEN(units)) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, size, "%.1f %s", v, units[u]);
    return buf;
}
