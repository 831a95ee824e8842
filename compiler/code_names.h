/* compiler/code_names.h: the kernels this process loaded, by the address
 * of their code on a device. The mock GPUs' executors of machine code name
 * the kernel in their messages (an illegal instruction, a fault) from here;
 * a program on the preloaded mock (libhcqmock.so, another copy of hcq)
 * loads its code elsewhere, so there a kernel is named by its address.
 *
 * Internal to hcq. Thread-safe. */
#ifndef HCQ_COMPILER_CODE_NAMES_H
#define HCQ_COMPILER_CODE_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void cc_code_name_add(uint64_t va, const char *name);
void cc_code_name_remove(uint64_t va);
/* The name of the kernel whose code starts at va, into buf; false if none. */
bool cc_code_name_find(uint64_t va, char *buf, size_t size);

#endif
