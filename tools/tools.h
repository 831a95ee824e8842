/* tools/: the hcq command. Each subcommand is a function taking its own
 * arguments (argv[0] is the subcommand) and returning the exit status. */
#ifndef HCQ_TOOLS_H
#define HCQ_TOOLS_H

#include <hcq/hcq.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

int tool_info(int argc, char **argv);
int tool_demo(int argc, char **argv);
int tool_compile(int argc, char **argv);
int tool_decode(int argc, char **argv);
int tool_bench(int argc, char **argv);
int tool_trace(int argc, char **argv);

int tool_top(int argc, char **argv);

/* hcq demo's training part (tools/demo_train.c): an MLP learns
 * Fashion-MNIST on dev (quick: the small run interpreted devices get);
 * 0 when the loss fell and the accuracy is reached */
int demo_train(hcq_device *dev, bool quick);

/* ** JSON (tools/json.c): every JSON document hcq prints starts with
 *   "hcq": {"version": "0.1.0", "revision": "3f2a9c1b7e04"}
 * so a result can be traced to the build that produced it. */
/* a JSON string, escaped (control bytes as \u00XX) */
void tool_json_str(FILE *f, const char *s);
/* "hcq": {...} without a trailing comma */
void tool_json_hcq(FILE *f);

/* ** telemetry as text or JSON (tools/monitor.c, for info and top) */
/* the readings, processes and events, one per line under `indent` */
void tool_telemetry_text(FILE *f, const hcq_telemetry *t, const char *indent);
/* a JSON object {"readings": {...}, "processes": [...], ...}; lines: one
 * reading per line (else all on one line, for JSON Lines) */
void tool_telemetry_json(FILE *f, const hcq_telemetry *t, bool lines);
/* bytes as "1.5 GiB" */
void tool_human_bytes(double bytes, char *out, size_t n);

/* prints "hcq: what: message" to stderr and returns 1 */
int tool_fail(const char *what);
/* true if argv has the flag */
int tool_has_flag(int argc, char **argv, const char *flag);
/* -h or --help */
bool tool_is_help(const char *arg);
/* "hcq TOOL: unknown option `ARG`" (or "unexpected argument") and its
 * --help hint on stderr; returns 2, the exit status of a usage error */
int tool_bad_arg(const char *tool, const char *arg);
/* a whole decimal number (no sign, no suffix) in [min, max], else a usage
 * error naming the tool and what was given */
bool tool_parse_u64(const char *tool, const char *what, const char *s, uint64_t min, uint64_t max, uint64_t *out);

#endif
