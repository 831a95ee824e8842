/* drivers/dump.h: command-stream dumps, the input of `hcq decode`.
 *
 * The mock GPU writes every stream segment it executes when HCQ_MOCK_DUMP
 * names a directory; the real backends write what they submit when HCQ_DUMP
 * does. One file per segment, named <sequence>-<engine>.hcqdump:
 *
 *   0  char magic[4] "HCQD"        4  u32 version (1)
 *   8  char format[16]             NUL-padded: "nv-gpfifo" (a pushbuffer),
 *                                  "nv-qmd", "amd-pm4", "amd-sdma", "cpu",
 *                                  "hcq-names" (a program's name, for the
 *                                  launches that follow)
 *   24 char engine[16]             NUL-padded: "nv0.compute", "amd1.sdma", ...
 *   40 u32 arch                    class id (NV) or gfx version (AMD, e.g. 110000)
 *   44 u32 ndw                     dwords that follow
 *   48 u64 va                      device address of the first dword
 *   56 dwords, little-endian
 */
#ifndef HCQ_DRIVERS_DUMP_H
#define HCQ_DRIVERS_DUMP_H

#include <hcq/base.h>

#define DRV_DUMP_MAGIC "HCQD"
#define DRV_DUMP_VERSION 1u
#define DRV_DUMP_HEADER 56u

typedef struct drv_dump_header {
    char magic[4];
    uint32_t version;
    char format[16];
    char engine[16];
    uint32_t arch;
    uint32_t ndw;
    uint64_t va;
} drv_dump_header;
_Static_assert(sizeof(drv_dump_header) == DRV_DUMP_HEADER, "dump header layout");

/* Writes one segment into dir (created if missing); numbers files in the
 * order of calls within the process. A directory holds one run: one that
 * already holds dumps when this process first writes there is refused.
 * Failures are reported once per directory at the default log level, never
 * fatal: a dump is a debugging aid. */
void drv_dump_write(const char *dir, const char *engine, const char *format, uint32_t arch, uint64_t va,
                    const uint32_t *dw, uint32_t ndw);

/* A kernel's serialized IR (hcq_kernel_serialize) as <seq>-<name>.hcqir in
 * dir, for `hcq compile --target T DIR` to build for another target. */
void drv_dump_ir(const char *dir, const char *name, const void *data, size_t size);

/* A program's name for decoders (format "hcq-names", drivers/decode.h): va
 * its launch address, arch its code size, the dwords the name. */
void drv_dump_name(const char *dir, const char *engine, uint64_t launch_addr, uint32_t code_bytes, const char *name);

#endif
