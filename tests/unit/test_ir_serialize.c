/* Serialized IR and the ELF reader/writer: round trips, and malformed
 * input (every truncation, byte flips) that must give HCQ_EFORMAT and
 * never crash (the sanitizer build runs these too). */
#include "compiler/elf.h"
#include "test_ir_util.h"

static hcq_kernel *sample(void)
{
    hcq_kernel *k = hcq_kernel_create("sample_kernel");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), in = hcq_ir_param_buffer(k, HCQ_F16);
    hcq_ir_ref n = hcq_ir_param_scalar(k, HCQ_I32), gid = tu_gid(k);
    hcq_ir_ref loc = hcq_ir_define_local(k, HCQ_F32, 32);
    hcq_ir_ref acc = hcq_ir_define_acc(k, hcq_ir_const_float(k, HCQ_F32, 0.25));
    hcq_ir_ref r = hcq_ir_range(k, hcq_ir_const_int(k, HCQ_I32, 0), n);
    hcq_ir_ref x = hcq_ir_cast(k, HCQ_F32, hcq_ir_load(k, in, r));
    hcq_ir_assign(k, acc, hcq_ir_mulacc(k, x, x, acc));
    hcq_ir_endrange(k, r);
    hcq_ir_store(k, loc, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), acc);
    hcq_ir_barrier(k);
    hcq_ir_ref c = hcq_ir_binary(k, HCQ_OP_CMPLT, gid, n);
    hcq_ir_ref iff = hcq_ir_if(k, c);
    hcq_ir_store_gated(k, out, gid, hcq_ir_unary(k, HCQ_OP_EXP2, acc), c);
    hcq_ir_endif(k, iff);
    tu_verify(k);
    return k;
}

static void blob(const hcq_kernel *k, uint8_t **data, size_t *size)
{
    void *p;
    cr_assert_eq(hcq_kernel_serialize(k, &p, size), HCQ_OK, "%s", hcq_error_message());
    *data = p;
}

Test(ir_serialize, round_trip_is_exact)
{
    hcq_kernel *k = sample();
    uint8_t *b, *b2;
    size_t n, n2;
    blob(k, &b, &n);
    hcq_kernel *r = NULL;
    cr_assert_eq(hcq_kernel_deserialize(b, n, &r), HCQ_OK, "%s", hcq_error_message());
    cr_assert_str_eq(hcq_kernel_name(r), "sample_kernel");
    cr_assert_eq(hcq_kernel_op_count(r), hcq_kernel_op_count(k));
    cr_assert(memcmp(hcq_kernel_ops(r), hcq_kernel_ops(k), hcq_kernel_op_count(k) * sizeof(hcq_ir_op)) == 0);
    blob(r, &b2, &n2);
    cr_assert_eq(n, n2);
    cr_assert(memcmp(b, b2, n) == 0);
    free(b);
    free(b2);
    hcq_kernel_destroy(k);
    hcq_kernel_destroy(r);
}

Test(ir_serialize, every_truncation_is_eformat)
{
    hcq_kernel *k = sample();
    uint8_t *b;
    size_t n;
    blob(k, &b, &n);
    for (size_t len = 0; len < n; len++) {
        uint8_t *copy = malloc(len ? len : 1); /* exact size, so ASan sees any overread */
        memcpy(copy, b, len);
        hcq_kernel *r = NULL;
        hcq_status st = hcq_kernel_deserialize(copy, len, &r);
        cr_assert_eq(st, HCQ_EFORMAT, "length %zu: %s", len, hcq_error_message());
        cr_assert_null(r);
        free(copy);
    }
    free(b);
    hcq_kernel_destroy(k);
}

Test(ir_serialize, every_byte_flip_is_eformat)
{
    hcq_kernel *k = sample();
    uint8_t *b;
    size_t n;
    blob(k, &b, &n);
    uint8_t *copy = malloc(n);
    uint64_t seed = 7;
    for (size_t i = 0; i < n; i++) {
        memcpy(copy, b, n);
        copy[i] ^= (uint8_t)(1u << (tu_rand(&seed) % 8));
        hcq_kernel *r = NULL;
        cr_assert_eq(hcq_kernel_deserialize(copy, n, &r), HCQ_EFORMAT, "flip at %zu accepted", i);
    }
    free(copy);
    free(b);
    hcq_kernel_destroy(k);
}

static bool refuse_all(void *ctx, const hcq_interp_access *a, char *why, size_t why_size)
{
    (void)ctx, (void)a;
    snprintf(why, why_size, "no memory here");
    return false;
}

/* Whatever verifies must also run (faulting, not crashing, on its null
 * buffers; stopped by the budget if it loops) and render. */
static void exercise(const hcq_kernel *k)
{
    uint8_t ka[1024] = {0};
    uint32_t need = hcq_kernel_param_layout(k, NULL);
    cr_assert(need <= sizeof ka);
    hcq_interp_mem mem = {refuse_all, NULL};
    hcq_interp_launch l = {.kernargs = ka, .kernarg_size = need, .num_groups = {2, 1, 1}, .local_size = {4, 1, 1},
                           .mem = &mem, .op_budget = 100000};
    hcq_status st = hcq_interp_run(k, &l);
    cr_assert(st == HCQ_OK || st == HCQ_EFAULT || st == HCQ_ETIMEDOUT, "%s: %s", hcq_status_name(st),
              hcq_error_message());
    char *src = NULL;
    cr_assert_eq(hcq_render(k, "cpu", &src), HCQ_OK, "%s", hcq_error_message());
    free(src);
}

/* Without the checksum every field check and the verifier are on their
 * own: random damage must still be refused or yield a verifiable kernel. */
Test(ir_serialize, random_damage_past_the_checksum_never_crashes)
{
    hcq_kernel *k = sample();
    uint8_t *b;
    size_t n;
    blob(k, &b, &n);
    uint8_t *copy = malloc(n);
    uint64_t seed = 99;
    int accepted = 0;
    for (int iter = 0; iter < 20000; iter++) {
        memcpy(copy, b, n);
        int flips = 1 + (int)(tu_rand(&seed) % 4);
        for (int f = 0; f < flips; f++) {
            size_t at = 16 + tu_rand(&seed) % (n - 16); /* past the header, where the ops are */
            copy[at] = (uint8_t)tu_rand(&seed);
        }
        hcq_kernel *r = NULL;
        hcq_status st = ir_deserialize(copy, n, false, &r);
        cr_assert(st == HCQ_OK || st == HCQ_EFORMAT, "status %s", hcq_status_name(st));
        if (st == HCQ_OK) {
            accepted++;
            cr_assert_eq(hcq_kernel_verify(r), HCQ_OK);
            exercise(r);
            hcq_kernel_destroy(r);
        }
    }
    cr_log_info("%d of 20000 damaged blobs still verified", accepted);
    free(copy);
    free(b);
    hcq_kernel_destroy(k);
}

Test(ir_serialize, messages_say_what_is_wrong)
{
    hcq_kernel *r = NULL;
    uint8_t junk[64] = "\x7f" "ELF";
    cr_assert_eq(hcq_kernel_deserialize(junk, sizeof junk, &r), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "not serialized IR"), "%s", hcq_error_message());
    hcq_kernel *k = sample();
    uint8_t *b;
    size_t n;
    blob(k, &b, &n);
    b[4] = 9; /* version */
    cr_assert_eq(ir_deserialize(b, n, false, &r), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "version 9"), "%s", hcq_error_message());
    free(b);
    /* a blob whose kernel does not verify names the op */
    hcq_kernel *bad = hcq_kernel_create("bad");
    hcq_ir_ref s[2] = {0, 0};
    hcq_ir_const_int(bad, HCQ_I32, 1);
    hcq_ir_emit(bad, HCQ_OP_ADD, HCQ_F32, 0, s, 2, 0);
    cr_assert_eq(hcq_kernel_serialize(bad, (void **)&b, &n), HCQ_EINVAL); /* refused on the way out too */
    hcq_kernel_destroy(bad);
    hcq_kernel_destroy(k);
}

/* ** ELF */
static void build_elf(uint8_t **out, size_t *size, uint16_t machine, uint16_t type)
{
    cc_elf_builder *b = cc_elf_builder_create(machine, type, 0x5a);
    cr_assert_not_null(b);
    cc_elf_builder_set_osabi(b, 64, 3);
    static const char text[] = "0123456789abcdef";
    cc_elf_section_spec t = {.name = ".text", .type = SHT_PROGBITS, .flags = SHF_ALLOC | SHF_EXECINSTR,
                             .addr = 0x1000, .align = 16, .data = text, .size = 16};
    cc_elf_section_spec bss = {.name = ".bss", .type = SHT_NOBITS, .flags = SHF_ALLOC | SHF_WRITE, .align = 8,
                               .size = 4096};
    cc_elf_section_spec note = {.name = ".note.hcq", .type = SHT_NOTE, .align = 4, .data = "abcd", .size = 4,
                                .link = CC_ELF_LINK_SYMTAB};
    uint32_t ti = cc_elf_add_section(b, &t), bi = cc_elf_add_section(b, &bss);
    cc_elf_add_section(b, &note);
    cr_assert(ti == 1 && bi == 2);
    cc_elf_add_symbol(b, "global_fn", 0x1004, 8, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), STV_DEFAULT, (uint16_t)ti);
    cc_elf_add_symbol(b, "local_obj", 0, 64, ELF64_ST_INFO(STB_LOCAL, STT_OBJECT), STV_DEFAULT, (uint16_t)bi);
    void *p;
    cr_assert_eq(cc_elf_builder_finish(b, &p, size), HCQ_OK, "%s", hcq_error_message());
    cc_elf_builder_destroy(b);
    *out = p;
}

Test(elf, writer_and_reader_round_trip)
{
    uint8_t *f;
    size_t n;
    build_elf(&f, &n, EM_CUDA, ET_EXEC);
    cc_elf e;
    cr_assert_eq(cc_elf_open(&e, f, n), HCQ_OK, "%s", hcq_error_message());
    cr_assert_eq(e.machine, EM_CUDA);
    cr_assert_eq(e.type, ET_EXEC);
    cr_assert_eq(e.flags, 0x5a);
    cr_assert_eq(e.osabi, 64);
    cr_assert_eq(e.abiversion, 3);
    const cc_elf_section *t = cc_elf_find_section(&e, ".text"), *bss = cc_elf_find_section(&e, ".bss");
    cr_assert(t && bss);
    cr_assert_eq(t->size, 16);
    cr_assert_eq(t->addr, 0x1000);
    cr_assert(memcmp(t->data, "0123456789abcdef", 16) == 0);
    cr_assert_eq(t->offset % 16, 0);
    cr_assert_null(bss->data);
    cr_assert_eq(bss->size, 4096);
    const cc_elf_section *note = cc_elf_find_section(&e, ".note.hcq"), *sym = cc_elf_find_section(&e, ".symtab");
    cr_assert(note && sym);
    cr_assert_eq(note->link, sym->index);
    cr_assert_eq(e.nsymbols, 3);
    cr_assert_str_eq(e.symbols[1].name, "local_obj"); /* locals first */
    cr_assert_eq(sym->info, 2);                        /* first global */
    const cc_elf_symbol *s = cc_elf_find_symbol(&e, "global_fn");
    cr_assert_not_null(s);
    cr_assert_eq(ELF64_ST_TYPE(s->info), STT_FUNC);
    const uint8_t *d;
    cr_assert_eq(cc_elf_symbol_data(&e, s, &d), HCQ_OK, "%s", hcq_error_message());
    cr_assert(memcmp(d, "456789ab", 8) == 0);
    cr_assert_eq(cc_elf_symbol_data(&e, cc_elf_find_symbol(&e, "local_obj"), &d), HCQ_EFORMAT);
    cr_assert_null(cc_elf_find_symbol(&e, "nope"));
    cc_elf_close(&e);
    free(f);
}

Test(elf, every_truncation_is_eformat)
{
    uint8_t *f;
    size_t n;
    build_elf(&f, &n, EM_AMDGPU, ET_DYN);
    for (size_t len = 0; len < n; len++) {
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, f, len);
        cc_elf e;
        hcq_status st = cc_elf_open(&e, copy, len);
        cr_assert_eq(st, HCQ_EFORMAT, "length %zu of %zu: %s", len, n, hcq_error_message());
        free(copy);
    }
    free(f);
}

Test(elf, corrupted_files_never_crash)
{
    uint8_t *f;
    size_t n;
    build_elf(&f, &n, EM_X86_64, ET_REL);
    uint8_t *copy = malloc(n);
    uint64_t seed = 5;
    int ok = 0;
    for (int iter = 0; iter < 20000; iter++) {
        memcpy(copy, f, n);
        for (int k = 0; k < 1 + (int)(tu_rand(&seed) % 3); k++) copy[tu_rand(&seed) % n] = (uint8_t)tu_rand(&seed);
        cc_elf e;
        hcq_status st = cc_elf_open(&e, copy, n);
        cr_assert(st == HCQ_OK || st == HCQ_EFORMAT, "%s", hcq_status_name(st));
        if (st) continue;
        ok++;
        /* everything the reader hands out must lie inside the buffer */
        for (uint32_t i = 0; i < e.nsections; i++) {
            const cc_elf_section *s = &e.sections[i];
            cr_assert((s->name >= (const char *)copy && s->name < (const char *)copy + n) || s->name[0] == 0);
            if (s->data) cr_assert(s->data >= copy && s->data + s->size <= copy + n);
            (void)cc_elf_find_section(&e, ".text");
        }
        for (uint32_t i = 0; i < e.nsymbols; i++) {
            const uint8_t *d;
            if (cc_elf_symbol_data(&e, &e.symbols[i], &d) == HCQ_OK)
                cr_assert(d >= copy && d + e.symbols[i].size <= copy + n);
        }
        cc_elf_close(&e);
    }
    cr_log_info("%d of 20000 corrupted files still parsed", ok);
    free(copy);
    free(f);
}

Test(elf, malformed_headers_are_described)
{
    uint8_t *f;
    size_t n;
    build_elf(&f, &n, EM_X86_64, ET_REL);
    cc_elf e;
    Elf64_Ehdr h;
    memcpy(&h, f, sizeof h);
    h.e_shoff = n - 10;
    memcpy(f, &h, sizeof h);
    cr_assert_eq(cc_elf_open(&e, f, n), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "section headers"), "%s", hcq_error_message());
    f[EI_CLASS] = ELFCLASS32;
    cr_assert_eq(cc_elf_open(&e, f, n), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "only 64-bit ELF"), "%s", hcq_error_message());
    cr_assert_eq(cc_elf_open(&e, "MZ\x90\x00", 4), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "not an ELF file (4 bytes, starting 4d 5a 90 00)"), "%s", hcq_error_message());
    free(f);
}

static uint8_t *read_whole(const char *path, size_t *size)
{
    FILE *fp = fopen(path, "rb");
    cr_assert_not_null(fp, "%s", path);
    size_t cap = 1 << 20, len = 0;
    uint8_t *b = malloc(cap);
    size_t r;
    while ((r = fread(b + len, 1, cap - len, fp)) > 0) {
        len += r;
        if (len == cap) b = realloc(b, cap *= 2);
    }
    fclose(fp);
    *size = len;
    return b;
}

Test(elf, reads_a_real_host_executable)
{
    size_t n;
    uint8_t *f = read_whole("/proc/self/exe", &n);
    cc_elf e;
    cr_assert_eq(cc_elf_open(&e, f, n), HCQ_OK, "%s", hcq_error_message());
    char what[96];
    cc_elf_describe(e.machine, e.type, what, sizeof what);
    cr_assert(strstr(what, "x86-64") || strstr(what, "AArch64"), "%s", what);
    cr_assert_not_null(cc_elf_find_section(&e, ".text"));
    cr_assert_not_null(cc_elf_find_symbol(&e, "build_elf"));
    cr_assert(e.nsegments > 0);
    cc_elf_close(&e);
    free(f);
}

Test(elf, ir_binary_loader_names_foreign_files)
{
    hcq_kernel *k = sample(), *r = NULL;
    hcq_binary *b;
    cr_assert_eq(hcq_compile(k, "ir", &b), HCQ_OK, "%s", hcq_error_message());
    cr_assert_str_eq(b->target, "ir");
    cr_assert_eq(cc_ir_binary_load(b->data, b->size, &r), HCQ_OK, "%s", hcq_error_message());
    cr_assert_eq(hcq_kernel_op_count(r), hcq_kernel_op_count(k));
    hcq_kernel_destroy(r);
    r = NULL;
    uint8_t *f;
    size_t n;
    build_elf(&f, &n, EM_CUDA, ET_EXEC);
    cr_assert_eq(cc_ir_binary_load(f, n, &r), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "a CUDA cubin (e_machine 190)"), "%s", hcq_error_message());
    free(f);
    build_elf(&f, &n, EM_AMDGPU, ET_DYN);
    cr_assert_eq(cc_ir_binary_load(f, n, &r), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "an AMDGPU code object (e_machine 224)"), "%s", hcq_error_message());
    free(f);
    build_elf(&f, &n, EM_NONE, ET_REL);
    cr_assert_eq(cc_ir_binary_load(f, n, &r), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "without a .hcq.ir section"), "%s", hcq_error_message());
    free(f);
    f = read_whole("/proc/self/exe", &n);
    cr_assert_eq(cc_ir_binary_load(f, n, &r), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "an x86-64 shared object") || strstr(hcq_error_message(), "an x86-64 executable"),
              "%s", hcq_error_message());
    free(f);
    cr_assert_eq(cc_ir_binary_load("hello", 5, &r), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "not an ELF file"), "%s", hcq_error_message());
    /* a damaged payload is caught by the IR reader behind the ELF */
    uint8_t *d = malloc(b->size);
    memcpy(d, b->data, b->size);
    cc_elf e;
    cr_assert_eq(cc_elf_open(&e, d, b->size), HCQ_OK);
    const cc_elf_section *s = cc_elf_find_section(&e, ".hcq.ir");
    d[s->offset + 40] ^= 1;
    cc_elf_close(&e);
    cr_assert_eq(cc_ir_binary_load(d, b->size, &r), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "section .hcq.ir"), "%s", hcq_error_message());
    free(d);
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
}

Test(ir_serialize, sha256_known_answers)
{
    uint8_t d[32];
    char hex[65];
    cc_sha256_once("abc", 3, d);
    cc_sha256_hex(d, hex);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    cc_sha256_once("", 0, d);
    cc_sha256_hex(d, hex);
    cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    cc_sha256_ctx s;
    cc_sha256_init(&s);
    for (size_t i = 0; i < strlen(m); i++) cc_sha256_update(&s, m + i, 1); /* byte by byte */
    cc_sha256_final(&s, d);
    cc_sha256_hex(d, hex);
    cr_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    uint8_t *mil = malloc(1000000);
    memset(mil, 'a', 1000000);
    cc_sha256_once(mil, 1000000, d);
    cc_sha256_hex(d, hex);
    cr_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(mil);
}
