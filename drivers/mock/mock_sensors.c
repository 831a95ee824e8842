/* The mock GPUs' sensors (mock.h: mock_gpu_sensors): an exponentially
 * smoothed utilization from the engines' busy time, and readings that
 * follow it linearly between idle and load. */
#include "drivers/mock/mock_internal.h"

#include <math.h>

mock_sensors mock_gpu_sensors(mock_gpu *g, const mock_sensor_model *m)
{
    pthread_mutex_lock(&g->sensor_lock);
    uint64_t now = hcq_now_ns(), busy = atomic_load(&g->busy_ns);
    if (g->sensor_t && now > g->sensor_t) {
        double dt = (double)(now - g->sensor_t) / 1e9;
        double inst = (double)(busy - g->sensor_busy) / 1e9 / dt; /* engines overlap: may pass 1 */
        if (inst > 1) inst = 1;
        g->sensor_util += (1 - exp(-dt)) * (inst - g->sensor_util);
    }
    g->sensor_t = now;
    g->sensor_busy = busy;
    double u = g->sensor_util;
    pthread_mutex_unlock(&g->sensor_lock);
    mock_sensors s = {
        .util = u * 100,
        .temp_c = m->idle_c + (m->load_c - m->idle_c) * u,
        .power_w = m->idle_w + (m->load_w - m->idle_w) * u,
        .clock_mhz = m->idle_mhz + (m->boost_mhz - m->idle_mhz) * (u > 0.05 ? 1 : u / 0.05),
    };
    return s;
}
