/* Shared by the bench programs: percentiles of a set of timings. A bench
 * reports the median with its spread (p10/p90) rather than a mean, since
 * one preempted round on a shared machine would move a mean. */
#ifndef HCQ_BENCH_STATS_H
#define HCQ_BENCH_STATS_H

#include <stdlib.h>

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct stat3 {
    double p10, median, p90;
} stat3;

/* sorts v in place */
static inline stat3 stats(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return (stat3){v[n / 10], v[n / 2], v[(n * 9) / 10]};
}

#endif
