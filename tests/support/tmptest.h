/* Test support: temporary files and directories that go away with the
 * process that made them. Each lies under ${TMPDIR:-/tmp} (run-tests.sh
 * gives each suite run a TMPDIR of its own and fails a suite that leaves
 * anything there) and is removed, a directory with all it holds, when the
 * process that made it exits normally: Criterion's worker for a test exits
 * after the test, passed or failed (a failed assertion ends the test, not
 * the process), so a test need not clean up on each of its paths. A
 * process forked from the maker (a test's child, which may exit()) removes
 * only what it made itself. A process killed by a signal removes nothing. */
#ifndef HCQ_TESTS_TMPTEST_H
#define HCQ_TESTS_TMPTEST_H

#include <stddef.h>

/* room for a temporary path (a longer TMPDIR fails the test that makes one) */
#define T_TMP_PATH 256

/* ${TMPDIR:-/tmp} */
const char *t_tmp_root(void);
/* Makes the directory <root>/NAME-XXXXXX, writes its path into buf and
 * returns buf; fails the test when it cannot. */
char *t_tmpdir(char *buf, size_t size, const char *name);
/* Makes the empty file <root>/NAME-XXXXXX (mkstemp's descriptor, which the
 * caller closes), writing its path into buf; fails the test when it cannot. */
int t_tmpfile(char *buf, size_t size, const char *name);
/* Removes path (a directory: with its contents) when this process exits:
 * for what another program makes at a path the test chose. */
void t_tmp_remove_at_exit(const char *path);
/* Removes now what this process made (registered with atexit; the TSan
 * build's Criterion shim, whose failed assertions and skips end the test's
 * process with _exit, calls it first). */
void t_tmp_cleanup(void);

#endif
