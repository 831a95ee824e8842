/* The NVIDIA part of the mock GPU: the GPU models, the device files
 * (/dev/nvidiactl, /dev/nvidiaN, /dev/nvidia-uvm) with their ioctls and
 * mmaps, and nvidia-uvm.ko's part: GPU and vaspace registration, external
 * ranges and their mappings into the GPUs' address space. See mock_nv.h. */
#include "drivers/mock/mock_nv.h"

#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ** models: numbers as the driver reports them for these parts. The
 * litter counts are the full die's (GH100 8 GPCs x 9 TPCs, GA100 8 x 8,
 * GA102 7 x 6, AD102 12 x 6, 2 SMs per TPC); floorsweeping leaves fewer
 * TPCs enabled: 66 (132 SMs) on an H100 SXM, 57 (114) on an H100 PCIe, 54
 * (108) on an A100, 64 (128) on an RTX 4090, 41 (82) on an RTX 3090. The
 * family (classes, QMD, register file, shared memory) comes from the SM
 * version (compiler/nv_chips.c). Sensors: idle/load temperature, power
 * and clock as the boards' data sheets give them. */
static const mnv_model builtin[] = {
    {.name = "H100", .full_name = "NVIDIA H100 80GB HBM3", .pci_device = 0x2330, .sm_version = 0x900, .gpcs = 8,
     .tpcs_per_gpc = 9, .sms_per_tpc = 2, .max_warps_per_sm = 64, .enabled_tpcs = 66, .vram_bytes = 80ull << 30,
     .sensors = {31, 68, 72, 650, 345, 1980}, .link_speed = 5, .link_width = 16, .subsys_vendor = 0x10de,
     .subsys_device = 0x16c1, .revision = 0xa1, .ecc = true, .datacenter = true},
    {.name = "H100PCIe", .full_name = "NVIDIA H100 PCIe", .pci_device = 0x2331, .sm_version = 0x900, .gpcs = 8,
     .tpcs_per_gpc = 9, .sms_per_tpc = 2, .max_warps_per_sm = 64, .enabled_tpcs = 57, .vram_bytes = 80ull << 30,
     .sensors = {31, 68, 72, 650, 345, 1980}, .link_speed = 5, .link_width = 16, .subsys_vendor = 0x10de,
     .subsys_device = 0x16c1, .revision = 0xa1, .ecc = true, .datacenter = true},
    {.name = "A100", .full_name = "NVIDIA A100-SXM4-40GB", .pci_device = 0x20B0, .sm_version = 0x800, .gpcs = 8,
     .tpcs_per_gpc = 8, .sms_per_tpc = 2, .max_warps_per_sm = 64, .enabled_tpcs = 54, .vram_bytes = 40ull << 30,
     .sensors = {30, 62, 55, 380, 210, 1410}, .link_speed = 4, .link_width = 16, .subsys_vendor = 0x10de,
     .subsys_device = 0x1463, .revision = 0xa1, .ecc = true, .datacenter = true},
    {.name = "RTX4090", .full_name = "NVIDIA GeForce RTX 4090", .pci_device = 0x2684, .sm_version = 0x809,
     .gpcs = 12, .tpcs_per_gpc = 6, .sms_per_tpc = 2, .max_warps_per_sm = 48, .enabled_tpcs = 64,
     .vram_bytes = 24ull << 30, .sensors = {34, 70, 21, 430, 210, 2520}, .link_speed = 4, .link_width = 16,
     .subsys_vendor = 0x10de, .subsys_device = 0x167c, .revision = 0xa1},
    {.name = "RTX3090", .full_name = "NVIDIA GeForce RTX 3090", .pci_device = 0x2204, .sm_version = 0x806, .gpcs = 7,
     .tpcs_per_gpc = 6, .sms_per_tpc = 2, .max_warps_per_sm = 48, .enabled_tpcs = 41, .vram_bytes = 24ull << 30,
     .sensors = {36, 74, 28, 340, 210, 1695}, .link_speed = 4, .link_width = 16, .subsys_vendor = 0x10de,
     .subsys_device = 0x147d, .revision = 0xa1},
};

/* the built-in rows, then any a test added */
static const mnv_model *models[BASE_ARRAY_LEN(builtin) + 8];
static size_t nmodels;
static pthread_mutex_t models_lock = PTHREAD_MUTEX_INITIALIZER;

static void models_init(void)
{
    if (nmodels) return;
    for (size_t i = 0; i < BASE_ARRAY_LEN(builtin); i++) models[nmodels++] = &builtin[i];
}

bool mock_nv_add_model(const mnv_model *m)
{
    pthread_mutex_lock(&models_lock);
    models_init();
    bool ok = nmodels < BASE_ARRAY_LEN(models);
    if (ok) models[nmodels++] = m;
    pthread_mutex_unlock(&models_lock);
    return ok;
}

uint32_t mnv_tpc_mask(const mnv_model *m, uint32_t gpc)
{
    if (gpc >= m->gpcs) return 0;
    uint32_t n = m->enabled_tpcs / m->gpcs + (gpc < m->enabled_tpcs % m->gpcs);
    /* the fused-off TPCs are not the top ones: clear every other bit from
     * bit 1, so a count of the highest bit would be wrong */
    uint32_t mask = (1u << m->tpcs_per_gpc) - 1;
    for (uint32_t b = 1, off = m->tpcs_per_gpc - n; off && b < m->tpcs_per_gpc; b += 2, off--) mask &= ~(1u << b);
    for (uint32_t b = m->tpcs_per_gpc; __builtin_popcount(mask) > (int)n && b--;) mask &= ~(1u << b);
    return mask;
}

static mnv_gpu gpus[8];
static uint32_t ngpus;
static char version[32];

mnv_gpu *mnv_gpu_by_index(uint32_t i) { return i < ngpus ? &gpus[i] : NULL; }
uint32_t mnv_gpu_count(void) { return ngpus; }
const char *mnv_driver_version(void) { return version; }

static int nv_init(const mock_config *cfg)
{
    ngpus = 0;
    snprintf(version, sizeof version, "%s", cfg->nv_driver);
    const mnv_model *m = NULL;
    char list[256] = "";
    pthread_mutex_lock(&models_lock);
    models_init();
    for (size_t i = 0; i < nmodels; i++) {
        if (!strcasecmp(cfg->nv_model, models[i]->name)) m = models[i];
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", models[i]->name);
    }
    pthread_mutex_unlock(&models_lock);
    if (!m) {
        base_err(HCQ_EINVAL, "HCQ_MOCK_CONFIG: nv=`%s`: no such NVIDIA model (models: %s)", cfg->nv_model, list);
        return -EINVAL;
    }
    const nv_family *f = nv_family_for_sm(m->sm_version);
    if (!f) {
        base_err(HCQ_EINVAL, "HCQ_MOCK_CONFIG: nv=`%s`: its SM version 0x%x is of no family hcq knows (%s)",
                 cfg->nv_model, m->sm_version, nv_families_driven());
        return -EINVAL;
    }
    for (uint32_t i = 0; i < cfg->nv_count && i < BASE_ARRAY_LEN(gpus); i++) {
        mnv_gpu *g = &gpus[i];
        memset(g, 0, sizeof *g);
        char name[16];
        snprintf(name, sizeof name, "nv%u", i);
        g->g = mock_gpu_add(name, m->name, m->vram_bytes);
        if (!g->g) return -ENOMEM;
        g->g->vendor = g;
        g->m = m;
        g->f = f;
        g->index = i;
        g->minor = i;
        g->gpu_id = (0x41u + i) << 8; /* as RM derives it from the PCI bus */
        static const uint8_t tag[4] = {0x68, 0x63, 0x71, 0x6d}; /* "hcqm" */
        memcpy(g->uuid, tag, 4);
        g->uuid[4] = (uint8_t)i;
        for (int k = 5; k < 16; k++) g->uuid[k] = (uint8_t)(m->pci_device >> (k % 2 * 8)) ^ (uint8_t)(k * 37);
        pthread_mutex_init(&g->fault_lock, NULL);
        ngpus++;
    }
    return 0;
}

static void nv_fini(void)
{
    mnv_rm_fini();
    for (uint32_t i = 0; i < ngpus; i++) pthread_mutex_destroy(&gpus[i].fault_lock);
    ngpus = 0;
}

/* ** device files */
static int path_minor(const char *path)
{
    if (strncmp(path, "/dev/nvidia", 11)) return -1;
    const char *d = path + 11;
    if (!*d) return -1;
    int n = 0;
    for (; *d; d++) {
        if (*d < '0' || *d > '9') return -1;
        n = n * 10 + (*d - '0');
    }
    return n;
}

static int nv_exists(const char *path)
{
    if (!ngpus) return 0;
    if (!strcmp(path, "/dev/nvidiactl") || !strcmp(path, "/dev/nvidia-uvm")) return 1;
    int minor = path_minor(path);
    return minor >= 0 && (uint32_t)minor < ngpus;
}

static int nv_open(const char *path, int flags, void **priv)
{
    (void)flags;
    int kind = !strcmp(path, "/dev/nvidiactl") ? MNV_FD_CTL : !strcmp(path, "/dev/nvidia-uvm") ? MNV_FD_UVM : 0;
    int minor = path_minor(path);
    if (!kind && minor < 0) return 0;
    if (!nv_exists(path)) return -ENOENT;
    mnv_fd *f = calloc(1, sizeof *f);
    if (!f) return -ENOMEM;
    f->kind = kind ? kind : MNV_FD_DEV;
    if (f->kind == MNV_FD_DEV) {
        f->gpu = &gpus[minor];
        atomic_fetch_add(&f->gpu->opened, 1);
    }
    *priv = f;
    return 1;
}

static int nv_close(void *priv)
{
    mnv_fd *f = priv;
    if (f->kind == MNV_FD_UVM) mnv_uvm_close_fd(f);
    else mnv_rm_close_fd(f);
    if (f->kind == MNV_FD_DEV) atomic_fetch_sub(&f->gpu->opened, 1);
    free(f);
    return 0;
}

uint32_t *mnv_status_field(int kind, unsigned long req, void *arg)
{
    uint8_t *a = arg;
    if (kind == MNV_FD_UVM) {
        switch (req) {
        case NV_UVM_INITIALIZE: return (uint32_t *)(a + offsetof(nv_uvm_initialize, rmStatus));
        case NV_UVM_MM_INITIALIZE: return (uint32_t *)(a + offsetof(nv_uvm_mm_initialize, rmStatus));
        case NV_UVM_REGISTER_GPU: return (uint32_t *)(a + offsetof(nv_uvm_register_gpu, rmStatus));
        case NV_UVM_UNREGISTER_GPU:
        case NV_UVM_UNREGISTER_GPU_VASPACE: return (uint32_t *)(a + offsetof(nv_uvm_unregister_gpu, rmStatus));
        case NV_UVM_REGISTER_GPU_VASPACE: return (uint32_t *)(a + offsetof(nv_uvm_register_gpu_vaspace, rmStatus));
        case NV_UVM_REGISTER_CHANNEL: return (uint32_t *)(a + offsetof(nv_uvm_register_channel, rmStatus));
        case NV_UVM_UNREGISTER_CHANNEL: return (uint32_t *)(a + offsetof(nv_uvm_unregister_channel, rmStatus));
        case NV_UVM_CREATE_EXTERNAL_RANGE: return (uint32_t *)(a + offsetof(nv_uvm_create_external_range, rmStatus));
        case NV_UVM_ENABLE_PEER_ACCESS: return (uint32_t *)(a + offsetof(nv_uvm_enable_peer_access, rmStatus));
        case NV_UVM_MAP_EXTERNAL_ALLOCATION:
            return (uint32_t *)(a + offsetof(nv_uvm_map_external_allocation, rmStatus));
        case NV_UVM_FREE: return (uint32_t *)(a + offsetof(nv_uvm_free, rmStatus));
        default: return NULL;
        }
    }
    const nv_escape_desc *d = nv_escape_desc_of(NV_IOC_NR(req));
    if (d && d->status_at2 >= 0 && d->size2 && NV_IOC_SIZE(req) == d->size2) return (uint32_t *)(a + d->status_at2);
    return d && d->status_at >= 0 && NV_IOC_SIZE(req) == d->size ? (uint32_t *)(a + d->status_at) : NULL;
}

static int nv_ioctl(void *priv, unsigned long req, void *arg)
{
    mnv_fd *f = priv;
    int err = 0;
    uint32_t status = 0;
    if (mock_ioctl_inject(&err, &status)) {
        uint32_t *sf = status ? mnv_status_field(f->kind, req, arg) : NULL;
        if (!sf) return -(err ? err : EIO);
        *sf = status;
        return 0;
    }
    if (!arg) return -EFAULT;
    return f->kind == MNV_FD_UVM ? mnv_uvm_ioctl(f, req, arg) : mnv_rm_ioctl(f, req, arg);
}

/* mmap of a device file: the mapping RM_MAP_MEMORY prepared on this fd */
static void *nv_mmap(void *priv, void *addr, size_t len, int prot, int flags, off_t off, int *err)
{
    mnv_fd *f = priv;
    if (!f->map_bo || off != 0 || len != f->map_len) {
        if (err) *err = EINVAL;
        return NULL;
    }
    uint64_t va = (flags & MAP_FIXED) ? (uint64_t)(uintptr_t)addr : mock_va_reserve(len);
    if (!va) {
        if (err) *err = ENOMEM;
        return NULL;
    }
    int rc = mock_va_map(va, len, f->map_bo, f->map_off, MOCK_MAP_CPU, (prot & PROT_WRITE) != 0);
    if (rc) {
        if (err) *err = -rc;
        return NULL;
    }
    if (f->map_usermode) f->map_gpu->usermode = (volatile uint8_t *)(uintptr_t)va;
    return (void *)(uintptr_t)va;
}

const mock_driver mock_nv_driver = {
    .name = "nv",
    .init = nv_init,
    .fini = nv_fini,
    .open = nv_open,
    .close = nv_close,
    .ioctl = nv_ioctl,
    .mmap = nv_mmap,
    .exists = nv_exists,
};

/* ** test hooks */
void mock_nv_pause(uint32_t index, bool paused)
{
    mnv_gpu *g = mnv_gpu_by_index(index);
    if (!g) return;
    atomic_store(&g->paused, paused);
    mnv_gpu_pause_doorbells(g, paused);
    mock_progress(); /* resumed engines look at their rings again */
}

uint32_t mock_nv_live_objects(void) { return mnv_rm_objects(); }

void mock_nv_last_error(uint32_t index, char *buf, size_t size)
{
    mnv_gpu *g = mnv_gpu_by_index(index);
    if (!size) return;
    buf[0] = 0;
    if (!g) return;
    pthread_mutex_lock(&g->fault_lock);
    snprintf(buf, size, "%s", g->last_error);
    pthread_mutex_unlock(&g->fault_lock);
}

/* ** UVM: per fd (a UVM va_space), the registered GPUs and the external
 * ranges with the GPUs each is mapped on */
typedef struct uvm_range {
    uint64_t va, size;
    uint32_t gpus; /* mapping bits (mock_gpu index) */
} uvm_range;

typedef struct mnv_uvm {
    bool mm_alive;        /* UVM_MM_INITIALIZE was done for it */
    uint32_t registered;  /* our GPU indexes with UVM_REGISTER_GPU */
    uint32_t vaspaces;    /* ... with their vaspace registered */
    uint32_t vs_client[8], vs_handle[8]; /* that vaspace, whose page directory UVM set */
    uint32_t (*chans)[2];                /* registered channels: client, handle */
    size_t nchans;
    uint32_t peers[8];    /* peers[i] bit j: GPUs i and j may map each other's video memory */
    uvm_range *ranges;
    size_t nranges, cap;
} mnv_uvm;

static pthread_mutex_t uvm_lock = PTHREAD_MUTEX_INITIALIZER;

static mnv_gpu *gpu_by_uuid(const uint8_t *uuid)
{
    for (uint32_t i = 0; i < ngpus; i++)
        if (!memcmp(gpus[i].uuid, uuid, 16)) return &gpus[i];
    return NULL;
}

static void range_unmap(uvm_range *r)
{
    for (uint32_t b = 0; b < 31; b++)
        if (r->gpus & (1u << b)) mock_va_unmap(r->va, r->size, 1u << b);
    r->gpus = 0;
}

/* A GPU leaving the va space takes its mappings of every external range
 * with it (uvm_va_space.c uvm_va_space_unregister_gpu_va_space: each
 * range's mappings on that GPU are destroyed); the other GPUs' stay */
static void ranges_drop_gpu(mnv_uvm *u, uint32_t bit)
{
    for (size_t i = 0; i < u->nranges; i++)
        if (u->ranges[i].gpus & bit) {
            mock_va_unmap(u->ranges[i].va, u->ranges[i].size, bit);
            u->ranges[i].gpus &= ~bit;
        }
}

void mnv_uvm_close_fd(mnv_fd *f)
{
    pthread_mutex_lock(&uvm_lock);
    if (f->uvm) {
        for (uint32_t i = 0; i < 8; i++)
            if (f->uvm->vaspaces & (1u << i)) mnv_rm_vaspace_pdb(f->uvm->vs_client[i], f->uvm->vs_handle[i], false);
        for (size_t i = 0; i < f->uvm->nchans; i++) mnv_rm_channel_bind(f->uvm->chans[i][0], f->uvm->chans[i][1], false);
        free(f->uvm->chans);
        for (size_t i = 0; i < f->uvm->nranges; i++) range_unmap(&f->uvm->ranges[i]);
        free(f->uvm->ranges);
        free(f->uvm);
        f->uvm = NULL;
    }
    pthread_mutex_unlock(&uvm_lock);
}

/* uvm_api_map_external_allocation (uvm_map_external.c), in its order: the
 * range 4K-aligned, not at 0, not empty (NV_ERR_INVALID_ADDRESS); 1 to
 * UVM_MAX_GPUS attributes (NV_ERR_INVALID_ARGUMENT); inside one external
 * range (NV_ERR_INVALID_ADDRESS); then per GPU: mapping, caching and kind
 * types UVM knows (NV_ERR_INVALID_ARGUMENT), a GPU with a va space
 * (NV_ERR_INVALID_DEVICE), what that GPU had mapped in the range unmapped
 * first (uvm_map_external_allocation_on_gpu), the memory RM dups. A
 * failure unmaps what the call mapped. rmCtrlFd is not looked at. */
static bool attrs_invalid(const nv_uvm_gpu_mapping_attributes *a)
{
    if (a->gpuMappingType > 3 || a->gpuCachingType > 2 || a->gpuCompressionType >= 2 || a->gpuFormatType > 1)
        return true;
    uint32_t bits = a->gpuElementBits;
    if (bits > 6 || bits == 3) return true; /* no 24-bit elements */
    return (a->gpuFormatType != 0) != (bits != 0);
}

static uint32_t map_external(mnv_uvm *u, nv_uvm_map_external_allocation *m)
{
    if (!m->base || !m->length || (m->base | m->length) & 4095 || m->base + m->length < m->base)
        return NV_ERR_INVALID_ADDRESS;
    if (!m->gpuAttributesCount || m->gpuAttributesCount > NV_UVM_MAX_GPUS) return NV_ERR_INVALID_ARGUMENT;
    uvm_range *r = NULL;
    for (size_t i = 0; i < u->nranges && !r; i++)
        if (m->base >= u->ranges[i].va && m->base < u->ranges[i].va + u->ranges[i].size) r = &u->ranges[i];
    if (!r || m->base + m->length > r->va + r->size) return NV_ERR_INVALID_ADDRESS;
    uint32_t mapped = 0, st = NV_OK; /* the GPU bits this call mapped */
    mock_bo *bo = NULL;
    for (uint64_t i = 0; i < m->gpuAttributesCount && !st; i++) {
        const nv_uvm_gpu_mapping_attributes *a = &m->perGpuAttributes[i];
        mnv_gpu *g = gpu_by_uuid(a->gpuUuid);
        if (attrs_invalid(a)) st = NV_ERR_INVALID_ARGUMENT;
        else if (!g || !(u->vaspaces & (1u << g->index))) st = NV_ERR_INVALID_DEVICE;
        if (st) break;
        uint32_t bit = 1u << g->g->index;
        /* *model limit*: the mock replaces whole mappings only */
        if (mock_va_unmap(m->base, m->length, bit) == -EINVAL) {
            st = NV_ERR_NOT_SUPPORTED;
            break;
        }
        uint64_t size = 0, host_va = 0;
        if (bo) mock_bo_unref(bo);
        bo = NULL;
        if (!mnv_rm_memory(m->hClient, m->hMemory, &bo, &size, &host_va)) st = NV_ERR_OBJECT_NOT_FOUND;
        else if (m->offset + m->length > size || m->offset + m->length < m->offset) st = NV_ERR_INVALID_LIMIT;
        /* host memory described by address is GPU-mapped where it lives */
        else if (!bo && host_va + m->offset != m->base) st = NV_ERR_NOT_SUPPORTED;
        if (st) break;
        /* another GPU's video memory needs peer access between the two
         * (uvm_map_external.c: NV_ERR_INVALID_DEVICE otherwise) */
        mnv_gpu *owner = NULL;
        for (uint32_t k = 0; bo && bo->vram_of && k < ngpus; k++)
            if (gpus[k].g == bo->vram_of) owner = &gpus[k];
        if (owner && owner != g && !(u->peers[g->index] & (1u << owner->index))) {
            st = NV_ERR_INVALID_DEVICE;
            break;
        }
        int rc = mock_va_map(m->base, m->length, bo, m->offset, bit, a->gpuMappingType != 3);
        /* *model limit*: one memory an address for every GPU */
        if (rc) st = rc == -EEXIST ? NV_ERR_NOT_SUPPORTED : NV_ERR_NO_MEMORY;
        else mapped |= bit, r->gpus |= bit;
    }
    if (bo) mock_bo_unref(bo);
    if (st)
        for (uint32_t b = 0; b < 31; b++)
            if (mapped & (1u << b)) mock_va_unmap(m->base, m->length, 1u << b);
    return st;
}

int mnv_uvm_ioctl(mnv_fd *f, unsigned long cmd, void *arg)
{
    uint32_t *sf = mnv_status_field(MNV_FD_UVM, cmd, arg);
    /* a command UVM lacks goes to its test ioctls, which answer ENOSYS
     * unless the module was loaded with uvm_enable_builtin_tests (uvm.c,
     * uvm_test.c) */
    if (!sf) return -ENOSYS;
    pthread_mutex_lock(&uvm_lock);
    uint32_t st = NV_OK;
    if (cmd == NV_UVM_INITIALIZE) {
        /* uvm_api_initialize (uvm.c): again with the same flags is fine,
         * with others, or on an mm file, NV_ERR_INVALID_ARGUMENT */
        uint64_t flags = ((nv_uvm_initialize *)arg)->flags;
        if (f->uvm_mm) st = NV_ERR_INVALID_ARGUMENT;
        else if (f->uvm_init) st = flags == f->uvm_flags ? NV_OK : NV_ERR_INVALID_ARGUMENT;
        else if (!(f->uvm = calloc(1, sizeof *f->uvm))) st = NV_ERR_NO_MEMORY;
        else f->uvm_init = true, f->uvm_flags = flags;
        goto out;
    }
    if (cmd == NV_UVM_MM_INITIALIZE) {
        /* uvm_api_mm_initialize (uvm.c): uvmFd a UVM file with a va_space,
         * this file untyped (NV_ERR_IN_USE, uvm_fd_type.c), once per
         * va_space (NV_ERR_INVALID_STATE) */
        mnv_fd *t = mock_fd_priv(((nv_uvm_mm_initialize *)arg)->uvmFd, &mock_nv_driver);
        if (!t || t->kind != MNV_FD_UVM || !t->uvm_init) st = NV_ERR_INVALID_ARGUMENT;
        else if (f->uvm_init || f->uvm_mm) st = NV_ERR_IN_USE;
        else if (t->uvm->mm_alive) st = NV_ERR_INVALID_STATE;
        else t->uvm->mm_alive = true, f->uvm_mm = true;
        goto out;
    }
    if (!f->uvm_init) {
        st = NV_ERR_ILLEGAL_ACTION;
        goto out;
    }
    mnv_uvm *u = f->uvm;
    switch (cmd) {
    case NV_UVM_REGISTER_GPU: {
        nv_uvm_register_gpu *r = arg;
        mnv_gpu *g = gpu_by_uuid(r->gpu_uuid);
        /* uvm_va_space_register_gpu (uvm_va_space.c): once a va space
         * (NV_ERR_INVALID_DEVICE) */
        if (!g || !atomic_load(&g->opened)) st = NV_ERR_GPU_UUID_NOT_FOUND;
        else if (u->registered & (1u << g->index)) st = NV_ERR_INVALID_DEVICE;
        else {
            u->registered |= 1u << g->index;
            if (mock_cfg()->nv_peer == MOCK_PEER_NVLINK) /* NVLink peers need no request */
                for (uint32_t k = 0; k < ngpus; k++)
                    if (k != g->index && (u->registered & (1u << k)))
                        u->peers[g->index] |= 1u << k, u->peers[k] |= 1u << g->index;
        }
        break;
    }
    case NV_UVM_UNREGISTER_GPU: {
        mnv_gpu *g = gpu_by_uuid(((nv_uvm_unregister_gpu *)arg)->gpu_uuid);
        if (!g || !(u->registered & (1u << g->index))) st = NV_ERR_INVALID_DEVICE;
        else {
            if (u->vaspaces & (1u << g->index))
                mnv_rm_vaspace_pdb(u->vs_client[g->index], u->vs_handle[g->index], false);
            ranges_drop_gpu(u, 1u << g->g->index);
            u->registered &= ~(1u << g->index), u->vaspaces &= ~(1u << g->index);
            for (uint32_t k = 0; k < 8; k++) u->peers[k] &= ~(1u << g->index);
            u->peers[g->index] = 0;
        }
        break;
    }
    case NV_UVM_REGISTER_GPU_VASPACE: {
        nv_uvm_register_gpu_vaspace *r = arg;
        mnv_gpu *g = gpu_by_uuid(r->gpuUuid);
        uint32_t flags = 0;
        /* uvm_va_space_register_gpu_va_space (uvm_va_space.c): a GPU of
         * the va space, without a GPU va space yet (check_gpu_va_space:
         * NV_ERR_INVALID_DEVICE), then RM's dup of the vaspace
         * (mnv_rm_vaspace), which must be one RM lets UVM own
         * (NV_ERR_INVALID_FLAGS); rmCtrlFd is not looked at (Bug 1624521) */
        if (!g || !(u->registered & (1u << g->index)) || (u->vaspaces & (1u << g->index))) st = NV_ERR_INVALID_DEVICE;
        else if ((st = mnv_rm_vaspace(r->hClient, r->hVaSpace, g, &flags))) break;
        else if (!(flags & NV_VASPACE_FLAGS_IS_EXTERNALLY_OWNED)) st = NV_ERR_INVALID_FLAGS;
        else {
            /* UVM sets the page directory of a vaspace RM lets it own
             * (nvUvmInterfaceSetPageDirectory): only then may a context
             * share use it (kctxshareInitCommon_IMPL) */
            u->vaspaces |= 1u << g->index;
            u->vs_client[g->index] = r->hClient, u->vs_handle[g->index] = r->hVaSpace;
            mnv_rm_vaspace_pdb(r->hClient, r->hVaSpace, true);
        }
        break;
    }
    case NV_UVM_UNREGISTER_GPU_VASPACE: {
        mnv_gpu *g = gpu_by_uuid(((nv_uvm_unregister_gpu_vaspace *)arg)->gpu_uuid);
        if (!g || !(u->vaspaces & (1u << g->index))) st = NV_ERR_INVALID_DEVICE;
        else {
            u->vaspaces &= ~(1u << g->index);
            mnv_rm_vaspace_pdb(u->vs_client[g->index], u->vs_handle[g->index], false);
            ranges_drop_gpu(u, 1u << g->g->index);
        }
        break;
    }
    case NV_UVM_REGISTER_CHANNEL: {
        /* uvm_register_channel (uvm_user_channel.c): the GPU's va space,
         * the channel RM retains (its context buffers exist once the engine
         * object does: NV_ERR_INVALID_CHANNEL), not registered already
         * (NV_ERR_INVALID_CHANNEL); rmCtrlFd is not looked at (Bug 1624521
         * there). *Model*: the range must be whole pages, not empty
         * (NV_ERR_INVALID_ARGUMENT); UVM checks it against the channel's
         * buffers, which the mock does not place */
        nv_uvm_register_channel *r = arg;
        mnv_gpu *g = gpu_by_uuid(r->gpuUuid);
        size_t i = 0;
        while (i < u->nchans && !(u->chans[i][0] == r->hClient && u->chans[i][1] == r->hChannel)) i++;
        if (!g || !(u->vaspaces & (1u << g->index))) st = NV_ERR_INVALID_DEVICE;
        else if (!mnv_rm_channel_ready(r->hClient, r->hChannel)) st = NV_ERR_INVALID_CHANNEL;
        else if (i < u->nchans) st = NV_ERR_INVALID_CHANNEL;
        else if (!r->length || (r->base | r->length) & 4095) st = NV_ERR_INVALID_ARGUMENT;
        else {
            uint32_t(*n)[2] = realloc(u->chans, (u->nchans + 1) * sizeof *n);
            if (!n) {
                st = NV_ERR_NO_MEMORY;
                break;
            }
            u->chans = n;
            u->chans[u->nchans][0] = r->hClient, u->chans[u->nchans][1] = r->hChannel;
            u->nchans++;
            mnv_rm_channel_bind(r->hClient, r->hChannel, true);
        }
        break;
    }
    case NV_UVM_UNREGISTER_CHANNEL: {
        /* uvm_unregister_channel: one registered, else NV_ERR_INVALID_CHANNEL */
        nv_uvm_unregister_channel *r = arg;
        size_t i = 0;
        while (i < u->nchans && !(u->chans[i][0] == r->hClient && u->chans[i][1] == r->hChannel)) i++;
        if (i == u->nchans) {
            st = NV_ERR_INVALID_CHANNEL;
            break;
        }
        mnv_rm_channel_bind(r->hClient, r->hChannel, false);
        memmove(&u->chans[i], &u->chans[i + 1], (u->nchans - i - 1) * sizeof *u->chans);
        u->nchans--;
        break;
    }
    case NV_UVM_CREATE_EXTERNAL_RANGE: {
        /* uvm_create_external_range (uvm_map_external.c): the range
         * 4K-aligned, not at 0, not empty (uvm_api_range_invalid_4k) */
        nv_uvm_create_external_range *r = arg;
        if (!r->base || !r->length || (r->base | r->length) & 4095 || r->base + r->length < r->base) {
            st = NV_ERR_INVALID_ADDRESS;
            break;
        }
        for (size_t i = 0; i < u->nranges; i++)
            if (r->base < u->ranges[i].va + u->ranges[i].size && u->ranges[i].va < r->base + r->length)
                st = NV_ERR_UVM_ADDRESS_IN_USE;
        if (st) break;
        if (u->nranges == u->cap) {
            size_t cap = u->cap ? u->cap * 2 : 32;
            uvm_range *n = realloc(u->ranges, cap * sizeof *n);
            if (!n) {
                st = NV_ERR_NO_MEMORY;
                break;
            }
            u->ranges = n;
            u->cap = cap;
        }
        u->ranges[u->nranges++] = (uvm_range){r->base, r->length, 0};
        break;
    }
    case NV_UVM_ENABLE_PEER_ACCESS: {
        /* uvm_api_enable_peer_access (uvm_va_space.c): two GPUs of the va
         * space, distinct, peers over PCIe (uvm_gpu_retain_pcie_peer_access:
         * an NVLink pair or none is NV_ERR_INVALID_DEVICE), not enabled
         * already (NV_ERR_INVALID_DEVICE). HCQ_MOCK_CONFIG nv_peer: pcie
         * (the default), nvlink (enabled at registration) or none */
        nv_uvm_enable_peer_access *r = arg;
        mnv_gpu *a = gpu_by_uuid(r->gpuUuidA), *b = gpu_by_uuid(r->gpuUuidB);
        int mode = mock_cfg()->nv_peer;
        if (!a || !b || a == b || !(u->registered & (1u << a->index)) || !(u->registered & (1u << b->index)))
            st = NV_ERR_INVALID_DEVICE;
        else if (mode != MOCK_PEER_PCIE || (u->peers[a->index] & (1u << b->index))) st = NV_ERR_INVALID_DEVICE;
        else u->peers[a->index] |= 1u << b->index, u->peers[b->index] |= 1u << a->index;
        break;
    }
    case NV_UVM_MAP_EXTERNAL_ALLOCATION: st = map_external(u, arg); break;
    case NV_UVM_FREE: {
        /* uvm_free (uvm_va_range.c): the range valid
         * (uvm_api_range_invalid_4k) and exactly one the va space has */
        nv_uvm_free *r = arg;
        st = NV_ERR_INVALID_ADDRESS;
        for (size_t i = 0; i < u->nranges; i++) {
            if (u->ranges[i].va != r->base || u->ranges[i].size != r->length) continue;
            range_unmap(&u->ranges[i]);
            u->ranges[i] = u->ranges[--u->nranges];
            st = NV_OK;
            break;
        }
        break;
    }
    default: st = NV_ERR_NOT_SUPPORTED; break;
    }
out:
    pthread_mutex_unlock(&uvm_lock);
    *sf = st;
    return 0;
}
