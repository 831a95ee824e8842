/* tests/corpus: foreign kernels (corpus.cu, and the HIP versions beside
 * it) and what they must compute, for any device and any executor.
 *
 * Each case names a kernel of the corpus, its launch (grid, block, the
 * dynamic shared memory it needs), its arguments (buffers with their
 * sizes, scalars), how to fill the inputs, and a C reference that computes
 * the expected outputs from the same inputs. A runner allocates the
 * buffers, fills them with init(), launches, reads the outputs back and
 * calls corpus_compare() with what ref() computed from a copy of the
 * inputs. Nothing here depends on hcq. */
#ifndef HCQ_TESTS_CORPUS_REF_H
#define HCQ_TESTS_CORPUS_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum corpus_arg_kind {
    CORPUS_IN,    /* a buffer the kernel reads */
    CORPUS_OUT,   /* a buffer the kernel writes (initial contents: init's) */
    CORPUS_INOUT, /* read and written */
    CORPUS_I32,   /* a 32-bit integer scalar */
    CORPUS_F32,   /* a float scalar */
};
enum corpus_elem { CORPUS_E_F32, CORPUS_E_I32, CORPUS_E_U32, CORPUS_E_F16, CORPUS_E_U8 };

typedef struct corpus_arg {
    enum corpus_arg_kind kind;
    enum corpus_elem elem; /* buffers: what the elements are (for comparing) */
    size_t count;          /* buffers: elements */
    int32_t i;             /* CORPUS_I32 */
    float f;               /* CORPUS_F32 */
} corpus_arg;

#define CORPUS_MAX_ARGS 6
typedef struct corpus_case {
    const char *kernel;
    uint32_t grid[3], block[3];
    uint32_t dyn_shared; /* bytes of dynamic shared memory (extern __shared__) the launch gives */
    unsigned nargs;
    corpus_arg args[CORPUS_MAX_ARGS];
    /* fills every buffer (inputs, and the initial contents of outputs); bufs[i] is argument i's (NULL for scalars) */
    void (*init)(void *const *bufs);
    /* computes the expected contents of the output buffers in place, from the inputs in the same array */
    void (*ref)(void *const *bufs, const corpus_arg *args);
    double tol; /* float outputs: the relative error allowed (0: bit for bit) */
} corpus_case;

extern const corpus_case corpus_cases[];
extern const unsigned corpus_ncases;

/* bytes of buffer argument a */
size_t corpus_arg_bytes(const corpus_arg *a);
/* got == want for output argument a of case c, within its tolerance;
 * false with the first difference described in why */
bool corpus_compare(const corpus_case *c, unsigned a, const void *got, const void *want, char *why, size_t why_size);

/* halves, rounded to nearest even (for the f16 kernels' references) */
uint16_t corpus_f16(double v);
double corpus_from_f16(uint16_t h);

#endif
