/* tools/: the hcq command. Each subcommand is a function taking its own
 * arguments (argv[0] is the subcommand) and returning the exit status. */
#ifndef HCQ_TOOLS_H
#define HCQ_TOOLS_H

#include <hcq/hcq.h>
#include <stdio.h>

int tool_info(int argc, char **argv);
int tool_demo(int argc, char **argv);
int tool_compile(int argc, char **argv);
int tool_decode(int argc, char **argv);
int tool_bench(int argc, char **argv);
int tool_trace(int argc, char **argv);

/* prints "hcq: what: message" to stderr and returns 1 */
int tool_fail(const char *what);
/* true if argv has the flag */
int tool_has_flag(int argc, char **argv, const char *flag);

#endif
