/* The NVIDIA backend's table (see nv.h for the files behind it). */
#include "drivers/nv/nv.h"

static uint32_t nv_count(void) { return nv_card_count(); }

const drv_backend drv_nv_backend = {
    .kind = "NV",
    .count = nv_count,
    .why_absent = nv_why_absent,
    .open = nv_open,
    .close = nv_close,
    .halt = nv_halt,
    .mem_alloc = nv_mem_alloc,
    .mem_free = nv_mem_free,
    .peer_map = nv_peer_map,
    .program_load = nv_program_load,
    .program_free = nv_program_free,
    .rec_wait = nv_rec_wait,
    .rec_signal = nv_rec_signal,
    .rec_timestamp = nv_rec_timestamp,
    .rec_barrier = nv_rec_barrier,
    .rec_exec = nv_rec_exec,
    .rec_copy = nv_rec_copy,
    .copy_max_bytes = NV_COPY_MAX_BYTES,
    .submit = nv_submit,
    .poll = nv_poll,
    .notifies_progress = false,
    .dumps_streams = true,
    .signal_written = nv_signal_written,
    .describe = nv_describe,
    .telemetry = nv_telemetry,
};
