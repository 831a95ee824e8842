/* drivers/amd/amd_metrics.h: our definitions of amdgpu's gpu_metrics
 * tables, the binary file /sys/class/drm/<card>/device/gpu_metrics that the
 * SMU firmware's readings are exposed through (torvalds/linux
 * drivers/gpu/drm/amd/include/kgd_pp_interface.h: struct
 * metrics_table_header and gpu_metrics_v1_3 .. v1_5; array sizes
 * NUM_HBM_INSTANCES 4, NUM_VCN 4, NUM_JPEG_ENG 32, NUM_XGMI_LINKS 8,
 * MAX_GFX_CLKS 8, MAX_CLKS 4). Natural C layout, little-endian. The kernel
 * fills a table with 0xff bytes before setting the fields a part reports
 * (smu_cmn_init_soft_gpu_metrics), so 0xffff means "not reported".
 *
 * Which version a part writes: gfx1100 (SMU 13.0.0) and gfx90a (Aldebaran)
 * v1.3; gfx942 (SMU 13.0.6) v1.4, v1.5 or v1.6 depending on the kernel.
 * Only the fields hcq reads are named; offsets are asserted. */
#ifndef HCQ_DRIVERS_AMD_METRICS_H
#define HCQ_DRIVERS_AMD_METRICS_H

#include <stddef.h>
#include <stdint.h>

#define AMD_METRICS_NONE16 0xffffu

typedef struct amd_metrics_header {
    uint16_t structure_size;  /* bytes of the whole table */
    uint8_t format_revision;  /* 1: dGPU, 2: APU */
    uint8_t content_revision; /* the minor version: 3 for v1.3 */
} amd_metrics_header;
_Static_assert(sizeof(amd_metrics_header) == 4, "metrics_table_header");

/* v1.3: temperatures in degrees C, power in W, clocks in MHz, activity in % */
typedef struct amd_metrics_v1_3 {
    amd_metrics_header h;
    uint16_t temperature_edge, temperature_hotspot, temperature_mem;
    uint16_t temperature_vrgfx, temperature_vrsoc, temperature_vrmem;
    uint16_t average_gfx_activity, average_umc_activity, average_mm_activity;
    uint16_t average_socket_power;
    uint64_t energy_accumulator;
    uint64_t system_clock_counter;
    uint16_t average_gfxclk_frequency, average_socclk_frequency, average_uclk_frequency;
    uint16_t average_vclk0_frequency, average_dclk0_frequency, average_vclk1_frequency, average_dclk1_frequency;
    uint16_t current_gfxclk, current_socclk, current_uclk;
    uint16_t current_vclk0, current_dclk0, current_vclk1, current_dclk1;
    uint32_t throttle_status;
    uint16_t current_fan_speed;
    uint16_t pcie_link_width, pcie_link_speed; /* lanes; 0.1 GT/s */
    uint16_t padding;
    uint32_t gfx_activity_acc, mem_activity_acc;
    uint16_t temperature_hbm[4];
    uint64_t firmware_timestamp;
    uint16_t voltage_soc, voltage_gfx, voltage_mem;
    uint16_t padding1;
    uint64_t indep_throttle_status;
} amd_metrics_v1_3;
_Static_assert(sizeof(amd_metrics_v1_3) == 120, "gpu_metrics_v1_3 size");
_Static_assert(offsetof(amd_metrics_v1_3, average_socket_power) == 22, "v1_3 average_socket_power");
_Static_assert(offsetof(amd_metrics_v1_3, energy_accumulator) == 24, "v1_3 energy_accumulator");
_Static_assert(offsetof(amd_metrics_v1_3, current_gfxclk) == 54, "v1_3 current_gfxclk");
_Static_assert(offsetof(amd_metrics_v1_3, throttle_status) == 68, "v1_3 throttle_status");
_Static_assert(offsetof(amd_metrics_v1_3, pcie_link_width) == 74, "v1_3 pcie_link_width");
_Static_assert(offsetof(amd_metrics_v1_3, temperature_hbm) == 88, "v1_3 temperature_hbm");
_Static_assert(offsetof(amd_metrics_v1_3, indep_throttle_status) == 112, "v1_3 indep_throttle_status");

/* v1.4 and v1.5 (MI300): no edge sensor; power is the current socket power */
typedef struct amd_metrics_v1_4 {
    amd_metrics_header h;
    uint16_t temperature_hotspot, temperature_mem, temperature_vrsoc;
    uint16_t curr_socket_power;
    uint16_t average_gfx_activity, average_umc_activity;
    uint16_t vcn_activity[4];
    uint64_t energy_accumulator;
    uint64_t system_clock_counter;
    uint32_t throttle_status, gfxclk_lock_status;
    uint16_t pcie_link_width, pcie_link_speed;
    uint16_t xgmi_link_width, xgmi_link_speed;
    uint32_t gfx_activity_acc, mem_activity_acc;
    uint64_t pcie_bandwidth_acc, pcie_bandwidth_inst;
    uint64_t pcie_l0_to_recov_count_acc, pcie_replay_count_acc, pcie_replay_rover_count_acc;
    uint64_t xgmi_read_data_acc[8], xgmi_write_data_acc[8];
    uint64_t firmware_timestamp;
    uint16_t current_gfxclk[8], current_socclk[4], current_vclk0[4], current_dclk0[4];
    uint16_t current_uclk;
    uint16_t padding;
} amd_metrics_v1_4;
_Static_assert(sizeof(amd_metrics_v1_4) == 288, "gpu_metrics_v1_4 size");
_Static_assert(offsetof(amd_metrics_v1_4, energy_accumulator) == 24, "v1_4 energy_accumulator");
_Static_assert(offsetof(amd_metrics_v1_4, pcie_link_width) == 48, "v1_4 pcie_link_width");
_Static_assert(offsetof(amd_metrics_v1_4, current_gfxclk) == 240, "v1_4 current_gfxclk");
_Static_assert(offsetof(amd_metrics_v1_4, current_uclk) == 280, "v1_4 current_uclk");

typedef struct amd_metrics_v1_5 {
    amd_metrics_header h;
    uint16_t temperature_hotspot, temperature_mem, temperature_vrsoc;
    uint16_t curr_socket_power;
    uint16_t average_gfx_activity, average_umc_activity;
    uint16_t vcn_activity[4];
    uint16_t jpeg_activity[32];
    uint64_t energy_accumulator;
    uint64_t system_clock_counter;
    uint32_t throttle_status, gfxclk_lock_status;
    uint16_t pcie_link_width, pcie_link_speed;
    uint16_t xgmi_link_width, xgmi_link_speed;
    uint32_t gfx_activity_acc, mem_activity_acc;
    uint64_t pcie_bandwidth_acc, pcie_bandwidth_inst;
    uint64_t pcie_l0_to_recov_count_acc, pcie_replay_count_acc, pcie_replay_rover_count_acc;
    uint32_t pcie_nak_sent_count_acc, pcie_nak_rcvd_count_acc;
    uint64_t xgmi_read_data_acc[8], xgmi_write_data_acc[8];
    uint64_t firmware_timestamp;
    uint16_t current_gfxclk[8], current_socclk[4], current_vclk0[4], current_dclk0[4];
    uint16_t current_uclk;
    uint16_t padding;
} amd_metrics_v1_5;
/* (jpeg_activity has NUM_JPEG_ENG = 32 entries, so energy_accumulator
 * lands at 88, not where a 16-entry array would put it) */
_Static_assert(sizeof(amd_metrics_v1_5) == 360, "gpu_metrics_v1_5 size");
_Static_assert(offsetof(amd_metrics_v1_5, energy_accumulator) == 88, "v1_5 energy_accumulator");
_Static_assert(offsetof(amd_metrics_v1_5, pcie_link_width) == 112, "v1_5 pcie_link_width");
_Static_assert(offsetof(amd_metrics_v1_5, xgmi_read_data_acc) == 176, "v1_5 xgmi_read_data_acc");
_Static_assert(offsetof(amd_metrics_v1_5, current_gfxclk) == 312, "v1_5 current_gfxclk");
_Static_assert(offsetof(amd_metrics_v1_5, current_uclk) == 352, "v1_5 current_uclk");

/* What hcq reads from a table of any version it knows, in one shape (a
 * field the table lacks or marks 0xffff is AMD_METRICS_NONE16). */
typedef struct amd_metrics {
    uint8_t format, content;
    uint16_t temp_edge, temp_hotspot, temp_mem; /* C */
    uint16_t power_w;                           /* average (v1.3) or current (v1.4+) socket power */
    uint16_t gfx_activity, umc_activity;        /* % */
    uint16_t gfxclk_mhz, uclk_mhz;
    uint16_t pcie_width, pcie_speed_x10;        /* lanes, 0.1 GT/s */
    uint32_t throttle_status;                   /* ASIC-dependent bits */
    uint64_t indep_throttle_status;             /* v1.3: ASIC-independent bits; 0 otherwise */
} amd_metrics;

/* Parses a gpu_metrics file of size bytes. 0, or -1 with why filled (a
 * version hcq does not decode, a size that does not match its version). */
int amd_metrics_parse(const void *buf, size_t size, amd_metrics *out, char *why, size_t why_size);

#endif
