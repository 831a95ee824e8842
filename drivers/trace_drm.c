/* The render nodes (/dev/dri/renderD*), for the tracer: DRM core ioctls
 * (version, capabilities, GEM handles, PRIME, syncobjs) and amdgpu's (GEM
 * create/mmap/VA/userptr, contexts, BO lists, CS with its IB chunks, INFO
 * queries by name, waits), from our definitions in drivers/amd/amd_drm.h.
 * Driver ioctls are decoded as amdgpu's when the node's driver said it is
 * amdgpu (DRM_IOCTL_VERSION, which libdrm always calls first), or, before
 * that, when the size is amdgpu's; otherwise they print as numbers. */
#include "drivers/trace.h"

#include "drivers/amd/amd_drm.h"

#include <string.h>

static bool is_dri(const char *p) { return !strncmp(p, "/dev/dri/", 9); }

static const char *core_name(unsigned nr)
{
    switch (nr) {
    case DRM_NR_VERSION: return "DRM_IOCTL_VERSION";
    case DRM_NR_GET_UNIQUE: return "DRM_IOCTL_GET_UNIQUE";
    case DRM_NR_GET_MAGIC: return "DRM_IOCTL_GET_MAGIC";
    case DRM_NR_SET_VERSION: return "DRM_IOCTL_SET_VERSION";
    case DRM_NR_GEM_CLOSE: return "DRM_IOCTL_GEM_CLOSE";
    case DRM_NR_GEM_FLINK: return "DRM_IOCTL_GEM_FLINK";
    case DRM_NR_GEM_OPEN: return "DRM_IOCTL_GEM_OPEN";
    case DRM_NR_GET_CAP: return "DRM_IOCTL_GET_CAP";
    case DRM_NR_SET_CLIENT_CAP: return "DRM_IOCTL_SET_CLIENT_CAP";
    case DRM_NR_AUTH_MAGIC: return "DRM_IOCTL_AUTH_MAGIC";
    case DRM_NR_PRIME_HANDLE_TO_FD: return "DRM_IOCTL_PRIME_HANDLE_TO_FD";
    case DRM_NR_PRIME_FD_TO_HANDLE: return "DRM_IOCTL_PRIME_FD_TO_HANDLE";
    case DRM_NR_SYNCOBJ_CREATE: return "DRM_IOCTL_SYNCOBJ_CREATE";
    case DRM_NR_SYNCOBJ_DESTROY: return "DRM_IOCTL_SYNCOBJ_DESTROY";
    case DRM_NR_SYNCOBJ_HANDLE_TO_FD: return "DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD";
    case DRM_NR_SYNCOBJ_FD_TO_HANDLE: return "DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE";
    case DRM_NR_SYNCOBJ_WAIT: return "DRM_IOCTL_SYNCOBJ_WAIT";
    case DRM_NR_SYNCOBJ_RESET: return "DRM_IOCTL_SYNCOBJ_RESET";
    case DRM_NR_SYNCOBJ_SIGNAL: return "DRM_IOCTL_SYNCOBJ_SIGNAL";
    case DRM_NR_SYNCOBJ_TIMELINE_WAIT: return "DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT";
    case DRM_NR_SYNCOBJ_QUERY: return "DRM_IOCTL_SYNCOBJ_QUERY";
    case DRM_NR_SYNCOBJ_TRANSFER: return "DRM_IOCTL_SYNCOBJ_TRANSFER";
    case DRM_NR_SYNCOBJ_TIMELINE_SIGNAL: return "DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL";
    }
    return NULL;
}

/* amdgpu's ioctls: name and argument size */
static const struct {
    unsigned nr;
    const char *name;
    unsigned size;
} amdgpu[] = {
    {AMDGPU_NR_GEM_CREATE, "DRM_IOCTL_AMDGPU_GEM_CREATE", sizeof(amdgpu_gem_create_args)},
    {AMDGPU_NR_GEM_MMAP, "DRM_IOCTL_AMDGPU_GEM_MMAP", sizeof(amdgpu_gem_mmap_args)},
    {AMDGPU_NR_CTX, "DRM_IOCTL_AMDGPU_CTX", sizeof(amdgpu_ctx_args)},
    {AMDGPU_NR_BO_LIST, "DRM_IOCTL_AMDGPU_BO_LIST", sizeof(amdgpu_bo_list_args)},
    {AMDGPU_NR_CS, "DRM_IOCTL_AMDGPU_CS", sizeof(amdgpu_cs_args)},
    {AMDGPU_NR_INFO, "DRM_IOCTL_AMDGPU_INFO", sizeof(amdgpu_info_args)},
    {AMDGPU_NR_GEM_METADATA, "DRM_IOCTL_AMDGPU_GEM_METADATA", 288},
    {AMDGPU_NR_GEM_WAIT_IDLE, "DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE", sizeof(amdgpu_gem_wait_idle_args)},
    {AMDGPU_NR_GEM_VA, "DRM_IOCTL_AMDGPU_GEM_VA", sizeof(amdgpu_gem_va_args)},
    {AMDGPU_NR_WAIT_CS, "DRM_IOCTL_AMDGPU_WAIT_CS", sizeof(amdgpu_wait_cs_args)},
    {AMDGPU_NR_GEM_OP, "DRM_IOCTL_AMDGPU_GEM_OP", sizeof(amdgpu_gem_op_args)},
    {AMDGPU_NR_GEM_USERPTR, "DRM_IOCTL_AMDGPU_GEM_USERPTR", sizeof(amdgpu_gem_userptr_args)},
    {AMDGPU_NR_WAIT_FENCES, "DRM_IOCTL_AMDGPU_WAIT_FENCES", sizeof(amdgpu_wait_fences_args)},
    {AMDGPU_NR_VM, "DRM_IOCTL_AMDGPU_VM", sizeof(amdgpu_vm_args)},
    {AMDGPU_NR_FENCE_TO_HANDLE, "DRM_IOCTL_AMDGPU_FENCE_TO_HANDLE", sizeof(amdgpu_fence_to_handle_args)},
    {AMDGPU_NR_SCHED, "DRM_IOCTL_AMDGPU_SCHED", sizeof(amdgpu_sched_args)},
};

static int amdgpu_index(unsigned long req)
{
    unsigned nr = DRM_IOC_NR(req);
    if (nr < DRM_COMMAND_BASE) return -1;
    for (size_t i = 0; i < sizeof amdgpu / sizeof *amdgpu; i++)
        if (amdgpu[i].nr == nr - DRM_COMMAND_BASE && amdgpu[i].size == DRM_IOC_SIZE(req)) return (int)i;
    return -1;
}

static const char *drm_name(unsigned long req)
{
    if (DRM_IOC_TYPE(req) != 'd') return NULL;
    unsigned nr = DRM_IOC_NR(req);
    if (nr < DRM_COMMAND_BASE || nr >= 0xa0) return core_name(nr);
    int i = amdgpu_index(req);
    return i >= 0 ? amdgpu[i].name : NULL;
}

static const char *info_name(uint32_t q)
{
    static const char *const n[] = {
        [AMDGPU_INFO_ACCEL_WORKING] = "ACCEL_WORKING", [AMDGPU_INFO_CRTC_FROM_ID] = "CRTC_FROM_ID",
        [AMDGPU_INFO_HW_IP_INFO] = "HW_IP_INFO", [AMDGPU_INFO_HW_IP_COUNT] = "HW_IP_COUNT",
        [AMDGPU_INFO_TIMESTAMP] = "TIMESTAMP", [AMDGPU_INFO_FW_VERSION] = "FW_VERSION",
        [AMDGPU_INFO_NUM_BYTES_MOVED] = "NUM_BYTES_MOVED", [AMDGPU_INFO_VRAM_USAGE] = "VRAM_USAGE",
        [AMDGPU_INFO_GTT_USAGE] = "GTT_USAGE", [AMDGPU_INFO_GDS_CONFIG] = "GDS_CONFIG",
        [AMDGPU_INFO_VRAM_GTT] = "VRAM_GTT", [AMDGPU_INFO_READ_MMR_REG] = "READ_MMR_REG",
        [AMDGPU_INFO_DEV_INFO] = "DEV_INFO", [AMDGPU_INFO_VIS_VRAM_USAGE] = "VIS_VRAM_USAGE",
        [AMDGPU_INFO_NUM_EVICTIONS] = "NUM_EVICTIONS", [AMDGPU_INFO_MEMORY] = "MEMORY",
        [AMDGPU_INFO_VCE_CLOCK_TABLE] = "VCE_CLOCK_TABLE", [AMDGPU_INFO_VBIOS] = "VBIOS",
        [AMDGPU_INFO_NUM_HANDLES] = "NUM_HANDLES", [AMDGPU_INFO_SENSOR] = "SENSOR",
        [AMDGPU_INFO_NUM_VRAM_CPU_PAGE_FAULTS] = "NUM_VRAM_CPU_PAGE_FAULTS",
        [AMDGPU_INFO_VRAM_LOST_COUNTER] = "VRAM_LOST_COUNTER",
        [AMDGPU_INFO_RAS_ENABLED_FEATURES] = "RAS_ENABLED_FEATURES", [AMDGPU_INFO_VIDEO_CAPS] = "VIDEO_CAPS",
        [AMDGPU_INFO_MAX_IBS] = "MAX_IBS", [AMDGPU_INFO_GPUVM_FAULT] = "GPUVM_FAULT",
    };
    return q < sizeof n / sizeof *n ? n[q] : NULL;
}

static const char *ip_name(uint32_t ip)
{
    static const char *const n[] = {"GFX", "COMPUTE", "DMA", "UVD", "VCE", "UVD_ENC", "VCN_DEC", "VCN_ENC", "VCN_JPEG"};
    return ip < sizeof n / sizeof *n ? n[ip] : "?";
}

static void put_domains(trace_line *l, uint64_t d)
{
    char s[96] = "";
    static const char *const n[] = {"CPU", "GTT", "VRAM", "GDS", "GWS", "OA", "DOORBELL"};
    for (unsigned i = 0; i < 7; i++)
        if (d & (1ull << i)) snprintf(s + strlen(s), sizeof s - strlen(s), "%s%s", s[0] ? "|" : "", n[i]);
    if (!s[0]) snprintf(s, sizeof s, "0x%llx", (unsigned long long)d);
    trace_str(l, "domains", s);
}

static void put_string(trace_line *l, const char *key, uint64_t ptr, uint64_t len)
{
    char s[64];
    size_t n = len < sizeof s - 1 ? (size_t)len : sizeof s - 1;
    if (!ptr || !trace_read(s, ptr, n)) return;
    s[n] = 0;
    trace_str(l, key, s);
}

static void core_fields(trace_line *l, const trace_call *c, unsigned nr)
{
    const void *arg = c->arg;
    bool before = c->before, ok = !before && c->ret >= 0;
    switch (nr) {
    case DRM_NR_VERSION:
        if (ok && c->arg_size == sizeof(drm_version_args)) {
            const drm_version_args *v = arg;
            char name[16] = "";
            size_t n = v->name_len < sizeof name - 1 ? (size_t)v->name_len : sizeof name - 1;
            if (v->name && trace_read(name, v->name, n)) {
                name[n] = 0;
                trace_str(l, "driver", name);
                tracer_fd_set_driver(c->t, c->fd, name); /* driver ioctls decode by it */
            }
            char ver[48];
            snprintf(ver, sizeof ver, "%d.%d.%d", v->major, v->minor, v->patchlevel);
            trace_str(l, "version", ver);
            put_string(l, "desc", v->desc, v->desc_len);
        }
        break;
    case DRM_NR_GET_UNIQUE:
        if (ok) put_string(l, "unique", ((const drm_unique_args *)arg)->unique, ((const drm_unique_args *)arg)->unique_len);
        break;
    case DRM_NR_GET_CAP:
    case DRM_NR_SET_CLIENT_CAP: {
        const drm_get_cap_args *g = arg;
        if (before) trace_hex(l, "capability", g->capability);
        if (before && nr == DRM_NR_SET_CLIENT_CAP) trace_u64(l, "value", g->value);
        if (ok && nr == DRM_NR_GET_CAP) trace_u64(l, "value", g->value);
        break;
    }
    case DRM_NR_GEM_CLOSE:
        if (before) trace_u64(l, "handle", ((const drm_gem_close_args *)arg)->handle);
        break;
    case DRM_NR_PRIME_HANDLE_TO_FD:
    case DRM_NR_PRIME_FD_TO_HANDLE: {
        const drm_prime_handle_args *p = arg;
        if (before && nr == DRM_NR_PRIME_HANDLE_TO_FD) {
            trace_u64(l, "handle", p->handle);
            trace_hex(l, "flags", p->flags);
        } else if (before) {
            trace_i64(l, "prime_fd", p->fd);
        } else if (ok && nr == DRM_NR_PRIME_HANDLE_TO_FD) {
            trace_i64(l, "prime_fd", p->fd);
        } else if (ok) {
            trace_u64(l, "handle", p->handle);
        }
        break;
    }
    case DRM_NR_SYNCOBJ_CREATE:
        if (before) trace_hex(l, "flags", ((const drm_syncobj_create_args *)arg)->flags);
        else if (ok) trace_u64(l, "handle", ((const drm_syncobj_create_args *)arg)->handle);
        break;
    case DRM_NR_SYNCOBJ_DESTROY:
        if (before) trace_u64(l, "handle", ((const drm_syncobj_create_args *)arg)->handle);
        break;
    case DRM_NR_SYNCOBJ_HANDLE_TO_FD:
    case DRM_NR_SYNCOBJ_FD_TO_HANDLE: {
        const drm_syncobj_handle_args *h = arg;
        if (before) trace_hex(l, "flags", h->flags);
        if (ok) {
            trace_u64(l, "handle", h->handle);
            trace_i64(l, "syncobj_fd", h->fd);
        }
        break;
    }
    case DRM_NR_SYNCOBJ_WAIT:
        if (c->arg_size >= 32) {
            const drm_syncobj_wait_args *w = arg;
            if (before) {
                trace_u64(l, "handles", w->count_handles);
                trace_i64(l, "timeout_ns", w->timeout_nsec);
                trace_hex(l, "flags", w->flags);
            } else if (ok) {
                trace_u64(l, "first_signaled", w->first_signaled);
            }
        }
        break;
    default:
        if (c->arg_size && c->arg_size <= 256 && (before || ok)) trace_bytes(l, before ? "in" : "out", arg, c->arg_size);
        break;
    }
}

static void cs_chunks(trace_line *l, const amdgpu_cs_args *cs)
{
    uint32_t n = cs->in.num_chunks < 8 ? cs->in.num_chunks : 8;
    uint64_t ptrs[8];
    if (!cs->in.chunks || !trace_read(ptrs, cs->in.chunks, n * sizeof ptrs[0])) return;
    for (uint32_t i = 0; i < n; i++) {
        amdgpu_cs_chunk ch;
        amdgpu_cs_chunk_ib ib;
        if (!trace_read(&ch, ptrs[i], sizeof ch)) continue;
        if (ch.chunk_id != AMDGPU_CHUNK_IB || !trace_read(&ib, ch.chunk_data, sizeof ib)) continue;
        char s[96];
        snprintf(s, sizeof s, "%s ring %u: 0x%llx, %u bytes", ip_name(ib.ip_type), ib.ring,
                 (unsigned long long)ib.va_start, ib.ib_bytes);
        trace_str(l, "ib", s);
    }
}

static void amdgpu_fields(trace_line *l, const trace_call *c, unsigned nr)
{
    const void *arg = c->arg;
    bool before = c->before, ok = !before && c->ret >= 0;
    switch (nr) {
    case AMDGPU_NR_GEM_CREATE: {
        const amdgpu_gem_create_args *g = arg;
        if (before) {
            trace_u64(l, "size", g->in.bo_size);
            trace_hex(l, "alignment", g->in.alignment);
            put_domains(l, g->in.domains);
            trace_hex(l, "domain_flags", g->in.domain_flags);
        } else if (ok) {
            trace_u64(l, "handle", g->out.handle);
        }
        break;
    }
    case AMDGPU_NR_GEM_MMAP: {
        const amdgpu_gem_mmap_args *g = arg;
        if (before) trace_u64(l, "handle", g->in.handle);
        else if (ok) trace_hex(l, "mmap_offset", g->out.addr_ptr);
        break;
    }
    case AMDGPU_NR_CTX: {
        const amdgpu_ctx_args *x = arg;
        static const char *const ops[] = {"?", "ALLOC_CTX", "FREE_CTX", "QUERY_STATE", "QUERY_STATE2",
                                          "GET_STABLE_PSTATE", "SET_STABLE_PSTATE"};
        if (before) {
            trace_str(l, "op", x->in.op < 7 ? ops[x->in.op] : "?");
            if (x->in.op != 1) trace_u64(l, "ctx_id", x->in.ctx_id);
            if (x->in.op == 1) trace_i64(l, "priority", x->in.priority);
        } else if (ok && c->in) {
            /* the answer's meaning depends on the op asked, which the
             * kernel overwrote: read it from the copy made before */
            uint32_t op = ((const amdgpu_ctx_args *)c->in)->in.op;
            if (op == 1) {
                trace_u64(l, "ctx_id", x->alloc.ctx_id);
            } else if (op == 3 || op == 4) {
                trace_hex(l, "state_flags", x->state.flags);
                trace_u64(l, "hangs", x->state.hangs);
                trace_u64(l, "reset_status", x->state.reset_status);
            }
        }
        break;
    }
    case AMDGPU_NR_BO_LIST: {
        const amdgpu_bo_list_args *b = arg;
        if (before) {
            trace_u64(l, "op", b->in.operation);
            trace_u64(l, "bos", b->in.bo_number);
        } else if (ok) {
            trace_u64(l, "list_handle", b->out.list_handle);
        }
        break;
    }
    case AMDGPU_NR_CS: {
        const amdgpu_cs_args *cs = arg;
        if (before) {
            trace_u64(l, "ctx_id", cs->in.ctx_id);
            trace_u64(l, "bo_list", cs->in.bo_list_handle);
            trace_u64(l, "chunks", cs->in.num_chunks);
            cs_chunks(l, cs);
        } else if (ok) {
            trace_u64(l, "seq", cs->out.handle);
        }
        break;
    }
    case AMDGPU_NR_INFO: {
        const amdgpu_info_args *i = arg;
        if (!before) break;
        const char *q = info_name(i->query);
        if (q) trace_str(l, "query", q);
        else trace_hex(l, "query", i->query);
        trace_u64(l, "return_size", i->return_size);
        if (i->query == AMDGPU_INFO_HW_IP_INFO || i->query == AMDGPU_INFO_HW_IP_COUNT)
            trace_str(l, "ip", ip_name(i->query_hw_ip.type));
        else if (i->query == AMDGPU_INFO_READ_MMR_REG) {
            trace_hex(l, "reg", i->read_mmr_reg.dword_offset);
            trace_u64(l, "count", i->read_mmr_reg.count);
        } else if (i->query == AMDGPU_INFO_SENSOR) {
            trace_u64(l, "sensor", i->sensor_info.type);
        } else if (i->query == AMDGPU_INFO_FW_VERSION) {
            trace_u64(l, "fw_type", i->query_fw.fw_type);
        }
        break;
    }
    case AMDGPU_NR_GEM_WAIT_IDLE: {
        const amdgpu_gem_wait_idle_args *w = arg;
        if (before) {
            trace_u64(l, "handle", w->in.handle);
            trace_u64(l, "timeout", w->in.timeout);
        } else if (ok) {
            trace_str(l, "status", w->out.status ? "busy" : "idle");
        }
        break;
    }
    case AMDGPU_NR_GEM_VA: {
        const amdgpu_gem_va_args *v = arg;
        static const char *const ops[] = {"?", "MAP", "UNMAP", "CLEAR", "REPLACE"};
        if (before) {
            trace_str(l, "op", v->operation < 5 ? ops[v->operation] : "?");
            trace_u64(l, "handle", v->handle);
            trace_hex(l, "va", v->va_address);
            trace_hex(l, "offset", v->offset_in_bo);
            trace_hex(l, "size", v->map_size);
            trace_hex(l, "flags", v->flags);
        }
        break;
    }
    case AMDGPU_NR_WAIT_CS: {
        const amdgpu_wait_cs_args *w = arg;
        if (before) {
            trace_u64(l, "seq", w->in.handle);
            trace_str(l, "ip", ip_name(w->in.ip_type));
            trace_u64(l, "ring", w->in.ring);
            trace_u64(l, "ctx_id", w->in.ctx_id);
        } else if (ok) {
            trace_str(l, "status", w->out.status ? "busy" : "done");
        }
        break;
    }
    case AMDGPU_NR_GEM_OP: {
        const amdgpu_gem_op_args *g = arg;
        if (before) {
            trace_u64(l, "handle", g->handle);
            trace_u64(l, "op", g->op);
        } else if (ok) {
            trace_hex(l, "value", g->value);
        }
        break;
    }
    case AMDGPU_NR_GEM_USERPTR: {
        const amdgpu_gem_userptr_args *u = arg;
        if (before) {
            trace_hex(l, "addr", u->addr);
            trace_u64(l, "size", u->size);
            trace_hex(l, "flags", u->flags);
        } else if (ok) {
            trace_u64(l, "handle", u->handle);
        }
        break;
    }
    case AMDGPU_NR_WAIT_FENCES: {
        const amdgpu_wait_fences_args *w = arg;
        if (before) {
            trace_u64(l, "fences", w->in.fence_count);
            trace_u64(l, "all", w->in.wait_all);
        } else if (ok) {
            trace_str(l, "status", w->out.status ? "signaled" : "timeout");
        }
        break;
    }
    case AMDGPU_NR_VM: {
        const amdgpu_vm_args *v = arg;
        if (before) trace_u64(l, "op", v->in.op);
        break;
    }
    case AMDGPU_NR_SCHED: {
        const amdgpu_sched_args *s = arg;
        if (before) {
            trace_u64(l, "op", s->op);
            trace_i64(l, "priority", s->priority);
        }
        break;
    }
    default:
        if (c->arg_size && c->arg_size <= 512 && (before || ok)) trace_bytes(l, before ? "in" : "out", arg, c->arg_size);
        break;
    }
}

static void drm_fields(trace_line *l, const trace_call *c)
{
    if (!c->arg || DRM_IOC_TYPE(c->req) != 'd') return;
    unsigned nr = DRM_IOC_NR(c->req);
    if (nr < DRM_COMMAND_BASE || nr >= 0xa0) {
        core_fields(l, c, nr);
        return;
    }
    char driver[16];
    tracer_fd_driver(c->t, c->fd, driver, sizeof driver);
    if (driver[0] && strcmp(driver, "amdgpu")) { /* another GPU's driver: its bytes */
        if (c->arg_size <= 256 && (c->before || c->ret >= 0))
            trace_bytes(l, c->before ? "in" : "out", c->arg, c->arg_size);
        return;
    }
    amdgpu_fields(l, c, nr - DRM_COMMAND_BASE);
}

const trace_decoder trace_dri_decoder = {"dri", is_dri, drm_name, NULL, drm_fields};
