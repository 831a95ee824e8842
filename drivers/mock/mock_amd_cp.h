/* The mock AMD command processor's internal interface, between its PM4
 * half (mock_amd_cp.c) and its AQL packet processor (mock_amd_aql.c). */
#ifndef HCQ_DRIVERS_MOCK_MOCK_AMD_CP_H
#define HCQ_DRIVERS_MOCK_MOCK_AMD_CP_H

#include "drivers/mock/mock_amd.h"

/* what executing a packet came to */
typedef enum ex { EX_DONE, EX_BLOCKED, EX_STOP, EX_IB } ex;

/* an XCC's compute register by hcq's register id (amd_regs.h) */
#define REG(cp, id) ((cp)->regs[amd_regs[id].off[(cp)->q->gpu->arch->family] - AMD_SH_REG_BASE])

/* stops the queue with the reason, named with the XCC: EX_STOP */
ex mock_amd_cp_hang(mock_amd_cp *cp, const char *fmt, ...) HCQ_PRINTF(2, 3);
/* HCQ_MOCK_CONFIG refuse=NAME: true, the queue stopped saying so */
bool mock_amd_cp_refused(mock_amd_cp *cp, const char *name);
/* an indirect buffer of ndw dwords at va fetched and begun: EX_IB, or EX_STOP */
ex mock_amd_cp_begin_ib(mock_amd_cp *cp, uint64_t va, uint32_t ndw);
/* the current indirect buffer run from where it stopped */
ex mock_amd_cp_run_ib(mock_amd_cp *cp);
/* this XCC's read position moved by `by` packets or dwords */
void mock_amd_cp_advance(mock_amd_cp *cp, uint64_t by);
/* the read pointer in memory (the slowest XCC's); false: a fault, reported */
bool mock_amd_cp_report_rptr(mock_amd_cp *cp);
/* the AQL queue's engine step (mock_amd_aql.c) */
mock_step mock_amd_aql_step(mock_engine *e, void *ctx);

#endif
