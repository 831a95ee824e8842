/* The version and the source revision (the Makefile writes the revision
 * into $(B)/revision.h, rebuilt only when it changes). */
#include "base/base.h"

#ifndef HCQ_GIT_REVISION
#define HCQ_GIT_REVISION "unknown"
#endif
#ifndef HCQ_LIBDIR
#define HCQ_LIBDIR "/usr/local/lib"
#endif

const char *hcq_version(void) { return HCQ_VERSION_STRING; }
const char *hcq_build_revision(void) { return HCQ_GIT_REVISION; }

const char *base_install_libdir(void) { return HCQ_LIBDIR; }
