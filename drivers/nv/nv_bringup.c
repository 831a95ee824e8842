/* Bringing an NVIDIA GPU up and tearing it down (nv-facts §2): device,
 * subdevice, the class list and GR info, usermode (the doorbell page), a
 * vaspace owned by UVM, the channel group with one compute and one copy
 * channel, their engine objects and work-submit tokens, a debugger object
 * (for MMU fault reports), scheduling, and the initial methods. Every step
 * that fails says which it was and what the driver answered; whatever was
 * made before it is freed. */
#include "drivers/nv/nv.h"

#include "base/base.h"
#include "drivers/sys.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ** families: classes and launch ABI by SM version (compiler/nv_chips.c) */
const nv_gen *nv_gen_for_sm(uint32_t sm, const char *gpu)
{
    const nv_family *f = nv_family_for_sm(sm);
    if (f) return f;
    unsigned major = (sm >> 8) & 0xff, minor = sm & 0xf;
    if (major >= 10)
        base_err(HCQ_ENOTSUP, "%s is sm_%u%u (Blackwell): not supported yet (it needs QMD V05 and the Blackwell "
                 "classes); hcq drives %s", gpu, major, minor, nv_families_driven());
    else
        base_err(HCQ_ENOTSUP, "%s is sm_%u%u: not supported; hcq drives %s", gpu, major, minor, nv_families_driven());
    return NULL;
}

/* for messages: the class's name, or "a class" */
static const char *class_name(uint32_t cls)
{
    const char *n = nv_class_name(cls);
    return n ? n : "a class";
}

/* ** teardown, tolerant of a half-made device */
static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;

static void gpu_destroy(nv_proc *p, nv_gpu *g)
{
    if (g->uvm_vaspace) {
        nv_uvm_unregister_gpu_vaspace u = {0};
        memcpy(u.gpu_uuid, g->uuid, 16);
        sys_ioctl(p->fd_uvm, NV_UVM_UNREGISTER_GPU_VASPACE, &u);
    }
    if (g->uvm_gpu) {
        nv_uvm_unregister_gpu u = {0};
        memcpy(u.gpu_uuid, g->uuid, 16);
        sys_ioctl(p->fd_uvm, NV_UVM_UNREGISTER_GPU, &u);
    }
    if (g->uvm_vaspace || g->uvm_gpu) nv_peer_gpu_gone(p, (uint32_t)(g->card - p->cards));
    if (g->usermode) sys_munmap((void *)g->usermode, NV_USERMODE_SIZE);
    nv_free_object(p, p->hclient, g->hdevice); /* the rest of its tree */
    if (g->fd_dev >= 0) sys_close(g->fd_dev);
    free(g);
}

static void gpu_put(nv_proc *p, nv_gpu *g)
{
    pthread_mutex_lock(&gpu_lock);
    if (--g->refs == 0) {
        for (uint32_t i = 0; i < NV_CARD_INFO_MAX; i++)
            if (p->gpus[i] == g) p->gpus[i] = NULL;
        gpu_destroy(p, g);
    }
    pthread_mutex_unlock(&gpu_lock);
}

/* Stops the channels: RM tears a channel group down with its channels,
 * which the GPU then no longer runs (their pushbuffers and rings may go
 * after this). Done first when a device closes, and again (a no-op) by
 * nv_close. */
bool nv_halt(hcq_device *dev)
{
    nv_dev *nv = nv_of(dev);
    nv_proc *p = nv ? nv->proc : NULL;
    if (!p || !nv->gpu) return true;
    for (int i = 0; i < 2; i++) {
        nv_chan *c = &nv->ch[i];
        if (c->uvm_registered) {
            nv_uvm_unregister_channel u = {.hClient = p->hclient, .hChannel = c->hchannel};
            memcpy(u.gpuUuid, nv->uuid, 16);
            sys_ioctl(p->fd_uvm, NV_UVM_UNREGISTER_CHANNEL, &u);
            c->uvm_registered = false;
        }
        if (c->uvm_base) nv_va_free(c->uvm_base, 64ull << 20);
        c->uvm_base = 0;
    }
    if (nv->hdebugger) nv_free_object(p, nv->hdevice, nv->hdebugger);
    if (nv->htsg) nv_free_object(p, nv->hdevice, nv->htsg); /* its channels and their objects with it */
    nv->hdebugger = nv->htsg = 0;
    return true;
}

void nv_close(hcq_device *dev)
{
    nv_dev *nv = nv_of(dev);
    if (!nv) return;
    nv_proc *p = nv->proc;
    if (p && nv->gpu) {
        nv_halt(dev);
        if (nv->local_mem.size) nv_mem_free(dev, &nv->local_mem);
        if (nv->sync.size) nv_mem_free(dev, &nv->sync);
        for (int i = 0; i < 2; i++) {
            if (nv->ch[i].pb.size) nv_mem_free(dev, &nv->ch[i].pb);
            if (nv->ch[i].notifier.size) nv_sysmem_free(dev, &nv->ch[i].notifier);
        }
        if (nv->gpfifo_area.size) nv_mem_free(dev, &nv->gpfifo_area);
        gpu_put(p, nv->gpu);
    }
    for (int i = 0; i < 2; i++) {
        free(nv->ch[i].pb_end);
        free(nv->ch[i].what);
        free(nv->ch[i].more);
        if (nv->ch[i].lock_init) pthread_mutex_destroy(&nv->ch[i].lock);
    }
    pthread_mutex_destroy(&nv->sync_lock);
    nv_proc_put(p);
    free(nv);
    dev->priv = NULL;
}

/* ** steps */
static const nv_card_info *find_card(nv_proc *p, uint32_t index)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < NV_CARD_INFO_MAX; i++) {
        if (!p->cards[i].valid) continue;
        char path[32];
        snprintf(path, sizeof path, "/dev/nvidia%u", p->cards[i].minor_number);
        if (sys_exists(path) != 0) continue;
        if (n++ == index) return &p->cards[i];
    }
    return NULL;
}

/* The SMs a part has enabled: the TPCs in the floorsweeping masks (GR
 * GET_GPC_MASK, then GET_TPC_MASK per enabled GPC; ctrl2080gr.h) times the
 * SMs per TPC. The product of the "litter" counts is the full die's
 * (144 on GH100 where an H100 SXM enables 132); it is the fallback, said
 * at HCQ_DEBUG=1, where RM refuses the masks (a MIG partition, say). */
static uint32_t enabled_sms(const char *id, nv_proc *p, nv_gpu *g)
{
    uint32_t litter = g->gpcs * g->tpcs_per_gpc * g->sms_per_tpc, status = 0, tpcs = 0;
    nv_gr_gpc_mask gm = {0};
    if (nv_control_status(p, g->hsubdevice, NV2080_CTRL_CMD_GR_GET_GPC_MASK, &gm, sizeof gm, &status,
                          "reading the enabled GPCs") != HCQ_OK || status != NV_OK) {
        BASE_LOG(1, "%s: NV2080_CTRL_CMD_GR_GET_GPC_MASK answered %s: the SM count is the full die's, %u (an upper "
                 "bound)", id, status ? nv_status_name(status) : hcq_error_message(), litter);
        return litter;
    }
    for (uint32_t gpc = 0; gpc < 32; gpc++) {
        if (!(gm.gpcMask >> gpc & 1)) continue;
        nv_gr_tpc_mask tm = {.gpcId = gpc};
        if (nv_control_status(p, g->hsubdevice, NV2080_CTRL_CMD_GR_GET_TPC_MASK, &tm, sizeof tm, &status,
                              "reading the enabled TPCs") != HCQ_OK || status != NV_OK) {
            BASE_LOG(1, "%s: NV2080_CTRL_CMD_GR_GET_TPC_MASK(GPC %u) answered %s: the SM count is the full die's, %u",
                     id, gpc, status ? nv_status_name(status) : hcq_error_message(), litter);
            return litter;
        }
        tpcs += (uint32_t)__builtin_popcount(tm.tpcMask);
    }
    uint32_t sms = tpcs * g->sms_per_tpc;
    if (!sms || sms > litter) {
        BASE_LOG(1, "%s: the floorsweeping masks give %u SMs, the die has %u: using %u", id, sms, litter, litter);
        return litter;
    }
    BASE_LOG(1, "%s: %u of %u TPCs enabled (GPC mask 0x%x): %u SMs", id, tpcs, g->gpcs * g->tpcs_per_gpc, gm.gpcMask,
             sms);
    return sms;
}

static hcq_status query_gpu(const char *id, nv_proc *p, nv_gpu *g)
{
    char what[160];
    hcq_status s;
    nv_info_entry gr[5] = {{NV_GR_INFO_SM_VERSION, 0}, {NV_GR_INFO_MAX_WARPS_PER_SM, 0},
                           {NV_GR_INFO_LITTER_NUM_GPCS, 0}, {NV_GR_INFO_LITTER_NUM_TPC_PER_GPC, 0},
                           {NV_GR_INFO_LITTER_NUM_SM_PER_TPC, 0}};
    nv_gr_get_info gi = {.grInfoListSize = 5, .grInfoList = (uint64_t)(uintptr_t)gr};
    snprintf(what, sizeof what, "%s bring-up: reading GR info (NV2080_CTRL_CMD_GR_GET_INFO)", id);
    if ((s = nv_control(p, g->hsubdevice, NV2080_CTRL_CMD_GR_GET_INFO, &gi, sizeof gi, what))) return s;
    g->sm_version = gr[0].data;
    g->max_warps_per_sm = gr[1].data;
    g->gpcs = gr[2].data;
    g->tpcs_per_gpc = gr[3].data;
    g->sms_per_tpc = gr[4].data;
    g->num_sms = enabled_sms(id, p, g);

    nv_info_entry fb[2] = {{NV_FB_INFO_RAM_SIZE, 0}, {NV_FB_INFO_HEAP_FREE, 0}};
    nv_fb_get_info fi = {.fbInfoListSize = 2, .fbInfoList = (uint64_t)(uintptr_t)fb};
    snprintf(what, sizeof what, "%s bring-up: reading the memory size (NV2080_CTRL_CMD_FB_GET_INFO)", id);
    if ((s = nv_control(p, g->hsubdevice, NV2080_CTRL_CMD_FB_GET_INFO, &fi, sizeof fi, what))) return s;
    g->vram_bytes = (uint64_t)fb[0].data << 10;
    g->vram_free_bytes = (uint64_t)fb[1].data << 10;

    nv_name_string ns = {0};
    snprintf(what, sizeof what, "%s bring-up: reading the GPU name (NV2080_CTRL_CMD_GPU_GET_NAME_STRING)", id);
    if ((s = nv_control(p, g->hsubdevice, NV2080_CTRL_CMD_GPU_GET_NAME_STRING, &ns, sizeof ns, what))) return s;
    snprintf(g->name, sizeof g->name, "%.*s", (int)sizeof ns.gpuNameString.ascii,
             (const char *)ns.gpuNameString.ascii);
    return HCQ_OK;
}

static hcq_status check_classes(const char *id, nv_proc *p, nv_gpu *g)
{
    char what[160];
    snprintf(what, sizeof what, "%s bring-up: reading the class list (NV0080_CTRL_CMD_GPU_GET_CLASSLIST)", id);
    nv_classlist cl = {0};
    hcq_status s = nv_control(p, g->hdevice, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl, what);
    if (s) return s;
    uint32_t n = cl.numClasses;
    if (!n || n > 4096) return base_err(HCQ_EIO, "%s: the driver lists %u classes", what, n);
    uint32_t *list = calloc(n, sizeof *list);
    if (!list) return HCQ_ENOMEM;
    cl.classList = (uint64_t)(uintptr_t)list;
    if (!(s = nv_control(p, g->hdevice, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl, what))) {
        const uint32_t need[4] = {g->gen->compute_cls, g->gen->copy_cls, g->gen->channel_cls, g->gen->usermode_cls};
        for (int k = 0; k < 4 && !s; k++) {
            bool found = false;
            for (uint32_t i = 0; i < cl.numClasses && i < n; i++) found |= list[i] == need[k];
            if (!found)
                s = base_err(HCQ_ENOTSUP, "%s: the driver does not offer %s (0x%04x) on this %s GPU, which hcq "
                             "needs", what, class_name(need[k]), need[k], g->gen->name);
        }
    }
    free(list);
    return s;
}

/* The GPU's shared part: made by its first device, reused by later ones. */
static hcq_status gpu_make(const char *id, nv_proc *p, const nv_card_info *card, nv_gpu *g)
{
    char what[192];
    hcq_status s;
    g->card = card;
    snprintf(what, sizeof what, "%s bring-up: opening /dev/nvidia%u", id, card->minor_number);
    if ((s = nv_open_dev_fd(p, card->minor_number, &g->fd_dev, what))) return s;

    nv_gpu_id_info_v2 idi = {.gpuId = card->gpu_id};
    snprintf(what, sizeof what, "%s bring-up: GPU id info (NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2)", id);
    if ((s = nv_control(p, p->hclient, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &idi, sizeof idi, what))) return s;
    nv_device_alloc da = {.deviceId = idi.deviceInstance, .hClientShare = p->hclient};
    snprintf(what, sizeof what, "%s bring-up: allocating the device (NV01_DEVICE_0)", id);
    if ((s = nv_alloc_object(p, p->hclient, NV01_DEVICE_0, &da, sizeof da, &g->hdevice, what))) return s;
    nv_subdevice_alloc sa = {0};
    snprintf(what, sizeof what, "%s bring-up: allocating the subdevice (NV20_SUBDEVICE_0)", id);
    if ((s = nv_alloc_object(p, g->hdevice, NV20_SUBDEVICE_0, &sa, sizeof sa, &g->hsubdevice, what))) return s;

    if ((s = query_gpu(id, p, g))) return s;
    if (!(g->gen = nv_gen_for_sm(g->sm_version, g->name))) return base_err_prefix(HCQ_ENOTSUP, "%s", id);
    if ((s = check_classes(id, p, g))) return s;

    snprintf(what, sizeof what, "%s bring-up: allocating the usermode page (%s)", id, class_name(g->gen->usermode_cls));
    if ((s = nv_alloc_object(p, g->hsubdevice, g->gen->usermode_cls, NULL, 0, &g->husermode, what))) return s;
    {
        /* CPU-map it like device memory: RM_MAP_MEMORY + mmap of a fresh /dev/nvidiaN */
        int fd;
        snprintf(what, sizeof what, "%s bring-up: mapping the usermode page", id);
        if ((s = nv_open_dev_fd(p, card->minor_number, &fd, what))) return s;
        nv_rm_map_memory mm = {.hClient = p->hclient, .hDevice = g->hdevice, .hMemory = g->husermode,
                               .length = NV_USERMODE_SIZE, .fd = fd};
        int rc = sys_ioctl(p->fd_ctl, NV_IOCTL_RM_MAP_MEMORY, &mm);
        if (rc < 0 || mm.status) {
            sys_close(fd);
            return rc < 0 ? nv_ioctl_err(rc, what, "RM_MAP_MEMORY") : nv_status_fail(mm.status, what, "RM_MAP_MEMORY");
        }
        int err = 0;
        void *u = sys_mmap(NULL, NV_USERMODE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, &err);
        sys_close(fd);
        if (!u) return base_err(HCQ_EIO, "%s: mmap: %s", what, strerror(err));
        g->usermode = u;
    }

    nv_vaspace_alloc va = {.flags = NV_VASPACE_FLAGS_ENABLE_PAGE_FAULTING | NV_VASPACE_FLAGS_IS_EXTERNALLY_OWNED,
                           .vaSize = 0x1fffffb000000ull, .vaBase = 0x1000};
    snprintf(what, sizeof what, "%s bring-up: allocating the vaspace (FERMI_VASPACE_A)", id);
    if ((s = nv_alloc_object(p, g->hdevice, FERMI_VASPACE_A, &va, nv_class_params(FERMI_VASPACE_A, p->major), &g->hvaspace, what)))
        return s;

    nv_gid_info gid = {.flags = NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY, .length = 16};
    snprintf(what, sizeof what, "%s bring-up: reading the GPU UUID (NV2080_CTRL_CMD_GPU_GET_GID_INFO)", id);
    if ((s = nv_control(p, g->hsubdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, &gid, sizeof gid, what))) return s;
    memcpy(g->uuid, gid.data, 16);

    nv_uvm_register_gpu rg = {.rmCtrlFd = -1};
    memcpy(rg.gpu_uuid, g->uuid, 16);
    snprintf(what, sizeof what, "%s bring-up: registering the GPU with UVM (UVM_REGISTER_GPU)", id);
    if ((s = nv_uvm(p, p->fd_uvm, NV_UVM_REGISTER_GPU, &rg, sizeof rg, &rg.rmStatus, what))) return s;
    g->uvm_gpu = true;
    nv_uvm_register_gpu_vaspace rv = {.rmCtrlFd = p->fd_ctl, .hClient = p->hclient, .hVaSpace = g->hvaspace};
    memcpy(rv.gpuUuid, g->uuid, 16);
    snprintf(what, sizeof what, "%s bring-up: registering the vaspace with UVM (UVM_REGISTER_GPU_VASPACE)", id);
    if ((s = nv_uvm(p, p->fd_uvm, NV_UVM_REGISTER_GPU_VASPACE, &rv, sizeof rv, &rv.rmStatus, what))) return s;
    g->uvm_vaspace = true;
    return HCQ_OK;
}

static hcq_status gpu_get(const char *id, nv_proc *p, uint32_t index, nv_gpu **out)
{
    pthread_mutex_lock(&gpu_lock);
    hcq_status s = HCQ_OK;
    const nv_card_info *card = find_card(p, index);
    uint32_t slot = card ? (uint32_t)(card - p->cards) : 0;
    nv_gpu *g = card ? p->gpus[slot] : NULL;
    if (!card) {
        s = base_err(HCQ_ENODEV, "%s: the driver lists no GPU %u", id, index);
    } else if (!g) {
        g = base_calloc(1, sizeof *g);
        if (!g) {
            s = HCQ_ENOMEM;
        } else {
            g->fd_dev = -1;
            if ((s = gpu_make(id, p, card, g))) {
                char msg[1536];
                snprintf(msg, sizeof msg, "%s", hcq_error_message());
                gpu_destroy(p, g);
                base_err(s, "%s", msg);
                g = NULL;
            } else {
                p->gpus[slot] = g;
            }
        }
    }
    if (g) {
        g->refs++;
        *out = g;
    }
    pthread_mutex_unlock(&gpu_lock);
    return s;
}

static hcq_status make_channel(hcq_device *dev, nv_dev *nv, int i, uint64_t ring_off, uint32_t entries)
{
    nv_proc *p = nv->proc;
    nv_chan *c = &nv->ch[i];
    const char *id = dev->props.id;
    char what[160];
    hcq_status s;
    c->name = i == NV_CH_COMPUTE ? "compute" : "copy";
    c->cls = i == NV_CH_COMPUTE ? nv->gen->compute_cls : nv->gen->copy_cls;
    c->entries = entries;
    c->ring = (volatile uint64_t *)((uint8_t *)nv->gpfifo_area.cpu + ring_off);
    c->ring_va = nv->gpfifo_area.va + ring_off;
    /* USERD after the ring, at a multiple of its size: RM refuses a
     * misaligned userdOffset (NV_ERR_INVALID_OFFSET), which a ring of 32
     * entries (256 bytes) would give */
    uint64_t userd_off = ring_off + base_align_up((uint64_t)entries * 8, NV_USERD_SIZE);
    c->userd = (volatile uint8_t *)nv->gpfifo_area.cpu + userd_off;
    c->progress = (volatile uint64_t *)((uint8_t *)nv->sync.cpu + NV_SYNC_PROGRESS + 16u * (unsigned)i);
    c->progress_va = nv->sync.va + NV_SYNC_PROGRESS + 16u * (unsigned)i;
    pthread_mutex_init(&c->lock, NULL);
    c->lock_init = true;
    c->pb_end = calloc(entries, sizeof *c->pb_end);
    c->what = calloc(entries, sizeof *c->what);
    c->more = calloc(entries, sizeof *c->more);
    if (!c->pb_end || !c->what || !c->more) return base_err(HCQ_ENOMEM, "%s: out of host memory", id);

    snprintf(what, sizeof what, "%s bring-up: the %s channel's error notifier", id, c->name);
    if ((s = nv_sysmem_alloc(dev, 4096, &c->notifier, what))) return s;
    uint32_t shift = base_env_get()->ring_shift ? base_env_get()->ring_shift : (i == NV_CH_COMPUTE ? 19u : 18u);
    shift = BASE_MAX(BASE_MIN(shift, 22u), 6u);
    c->pb_dw = 1u << shift;
    snprintf(what, sizeof what, "%s bring-up: the %s channel's pushbuffer", id, c->name);
    if ((s = nv_mem_alloc(dev, (uint64_t)c->pb_dw * 4, DRV_MEM_HOST | DRV_MEM_CPU | DRV_MEM_LOW, &c->pb)))
        return base_err_prefix(s, "%s", what);
    c->pb_cpu = c->pb.cpu;

    nv_channel_alloc ca = {.hObjectError = (uint32_t)c->notifier.handle,
                           .hObjectBuffer = (uint32_t)nv->gpfifo_area.handle,
                           .gpFifoOffset = c->ring_va,
                           .gpFifoEntries = entries,
                           .hContextShare = nv->hctxshare,
                           .hUserdMemory = {(uint32_t)nv->gpfifo_area.handle},
                           .userdOffset = {userd_off}};
    snprintf(what, sizeof what, "%s bring-up: allocating the %s channel (%s)", id, c->name,
             class_name(nv->gen->channel_cls));
    if ((s = nv_alloc_object(p, nv->htsg, nv->gen->channel_cls, &ca, sizeof ca, &c->hchannel, what))) return s;
    snprintf(what, sizeof what, "%s bring-up: allocating %s (0x%04x) on the %s channel", id, class_name(c->cls),
             c->cls, c->name);
    if ((s = nv_alloc_object(p, c->hchannel, c->cls, NULL, 0, &c->hobject, what))) return s;
    nv_work_submit_token t = {.workSubmitToken = 0xFFFFFFFFu};
    snprintf(what, sizeof what, "%s bring-up: the %s channel's work-submit token "
             "(NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN)", id, c->name);
    if ((s = nv_control(p, c->hchannel, NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, &t, sizeof t, what)))
        return s;
    c->token = t.workSubmitToken;
    /* UVM maps the channel's context buffers into this range: required
     * with a vaspace UVM owns, and only after the engine object exists */
    if ((s = nv_va_alloc(64ull << 20, 64ull << 20, false, &c->uvm_base))) return base_err_prefix(s, "%s", id);
    nv_uvm_register_channel rc = {.rmCtrlFd = p->fd_ctl, .hClient = p->hclient, .hChannel = c->hchannel,
                                  .base = c->uvm_base, .length = 64ull << 20};
    memcpy(rc.gpuUuid, nv->uuid, 16);
    snprintf(what, sizeof what, "%s bring-up: registering the %s channel with UVM (UVM_REGISTER_CHANNEL)", id,
             c->name);
    if ((s = nv_uvm(p, p->fd_uvm, NV_UVM_REGISTER_CHANNEL, &rc, sizeof rc, &rc.rmStatus, what))) return s;
    c->uvm_registered = true;
    return HCQ_OK;
}

/* the methods every channel needs before work: its engine object, and on
 * the compute channel the shared and local memory windows */
static hcq_status first_methods(hcq_device *dev, nv_dev *nv)
{
    for (int i = 0; i < 2; i++) {
        drv_rec r;
        drv_rec_init(&r, dev, (hcq_queue_type)i);
        if (i == NV_CH_COMPUTE) {
            nv_set_object(&r, NV_SUBCH_COMPUTE, nv->gen->compute_cls);
            nv_set_shared_window(&r, NV_SHARED_WINDOW);
            nv_set_local_window(&r, NV_LOCAL_WINDOW);
        } else {
            nv_set_object(&r, NV_SUBCH_COPY, nv->gen->copy_cls);
        }
        char what[96];
        snprintf(what, sizeof what, "%s bring-up: the %s channel's first methods", dev->props.id, nv->ch[i].name);
        hcq_status s = r.err ? r.err : nv_run_internal(dev, &r, what);
        drv_rec_fini(&r);
        if (s) return s;
    }
    return HCQ_OK;
}

/* The channel group, its two channels, the debugger object and what the
 * channels need before work (scheduling, first methods, local memory):
 * made at open and made again when the self-test resets them. */
static hcq_status channels_up(hcq_device *dev, nv_dev *nv)
{
    const char *id = dev->props.id;
    nv_proc *p = nv->proc;
    char what[192];
    hcq_status s;
    nv_tsg_alloc ta = {.engineType = NV2080_ENGINE_TYPE_GRAPHICS};
    snprintf(what, sizeof what, "%s bring-up: allocating the channel group (KEPLER_CHANNEL_GROUP_A)", id);
    if ((s = nv_alloc_object(p, nv->hdevice, KEPLER_CHANNEL_GROUP_A, &ta, sizeof ta, &nv->htsg, what))) return s;
    nv_ctxshare_alloc cs = {.hVASpace = nv->hvaspace, .flags = NV_CTXSHARE_FLAGS_SUBCONTEXT_ASYNC};
    snprintf(what, sizeof what, "%s bring-up: allocating the context share (FERMI_CONTEXT_SHARE_A)", id);
    if ((s = nv_alloc_object(p, nv->htsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, &nv->hctxshare, what))) return s;
    uint64_t stride = nv->gpfifo_area.size / 2;
    for (int i = 0; i < 2; i++)
        if ((s = make_channel(dev, nv, i, (uint64_t)i * stride, nv->ring_entries))) return s;

    nv_debugger_alloc dbg = {.hAppClient = p->hclient, .hClass3dObject = nv->ch[NV_CH_COMPUTE].hobject};
    snprintf(what, sizeof what, "%s bring-up: allocating the debugger object for fault reports (GT200_DEBUGGER)", id);
    if ((s = nv_alloc_object(p, nv->hdevice, GT200_DEBUGGER, &dbg, sizeof dbg, &nv->hdebugger, what))) return s;

    nv_gpfifo_schedule sch = {.bEnable = 1};
    snprintf(what, sizeof what, "%s bring-up: scheduling the channel group (NVA06C_CTRL_CMD_GPFIFO_SCHEDULE)", id);
    if ((s = nv_control(p, nv->htsg, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &sch,
                        nv_ctrl_params(NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, p->major), what)))
        return s;
    if ((s = first_methods(dev, nv))) return s;
    /* the proven path gives every launch the ABI's reserve of local memory;
     * where the GPU's memory cannot hold that for every thread it can run,
     * launches get local memory only for a stack */
    if (nv->path.local == NV_LOCAL_MIN && (s = nv_local_ensure(dev, nv, NV_LOCAL_RESERVE))) {
        if (s != HCQ_ENOMEM) return base_err_prefix(s, "%s bring-up", id);
        BASE_LOG(1, "%s: %s; launches get local memory only for a stack", id, hcq_error_message());
        nv->path.local = NV_LOCAL_LAZY;
    }
    return HCQ_OK;
}

/* Undoes channels_up (the memory the rings live in stays, cleared). */
static void channels_down(hcq_device *dev, nv_dev *nv)
{
    nv_halt(dev);
    nv->hctxshare = 0; /* went with the channel group */
    if (nv->local_mem.size) nv_mem_free(dev, &nv->local_mem);
    nv->local_per_thread = 0;
    for (int i = 0; i < 2; i++) {
        nv_chan *c = &nv->ch[i];
        if (c->pb.size) nv_mem_free(dev, &c->pb);
        if (c->notifier.size) nv_sysmem_free(dev, &c->notifier);
        free(c->pb_end);
        free(c->what);
        free(c->more);
        if (c->lock_init) pthread_mutex_destroy(&c->lock);
        memset(c, 0, sizeof *c);
    }
    /* the rings, USERD and the progress slots start again from zero */
    memset(nv->gpfifo_area.cpu, 0, nv->gpfifo_area.size);
    memset((uint8_t *)nv->sync.cpu + NV_SYNC_PROGRESS, 0, 32);
}

hcq_status nv_channels_reset(hcq_device *dev)
{
    nv_dev *nv = nv_of(dev);
    channels_down(dev, nv);
    return channels_up(dev, nv);
}

static hcq_status bring_up(hcq_device *dev, nv_dev *nv, uint32_t index)
{
    const char *id = dev->props.id;
    hcq_status s = nv_proc_get(&nv->proc);
    if (s) return s;
    nv_proc *p = nv->proc;
    if ((s = gpu_get(id, p, index, &nv->gpu))) return s;
    nv_gpu *g = nv->gpu;
    nv->card = g->card;
    nv->gen = g->gen;
    nv->fd_dev = g->fd_dev;
    nv->hdevice = g->hdevice;
    nv->hsubdevice = g->hsubdevice;
    nv->husermode = g->husermode;
    nv->hvaspace = g->hvaspace;
    memcpy(nv->uuid, g->uuid, 16);
    nv->usermode = g->usermode;
    nv->sm_version = g->sm_version;
    nv->num_sms = g->num_sms;
    nv->max_warps_per_sm = g->max_warps_per_sm;
    nv->gpcs = g->gpcs;
    nv->tpcs_per_gpc = g->tpcs_per_gpc;
    nv->sms_per_tpc = g->sms_per_tpc;
    nv->vram_bytes = g->vram_bytes;
    nv->vram_free_bytes = g->vram_free_bytes;
    const char *name = g->name;

    nv_paths_default(nv);

    /* the completion page of internal submissions */
    if ((s = nv_mem_alloc(dev, 4096, DRV_MEM_HOST | DRV_MEM_CPU | DRV_MEM_UNCACHED | DRV_MEM_LOW, &nv->sync)))
        return base_err_prefix(s, "%s bring-up: the internal completion page", id);
    /* GPFIFO rings and USERD, both in video memory (Hopper refuses USERD in
     * system memory with the ring in video memory) */
    uint32_t shift = base_env_get()->ring_shift ? base_env_get()->ring_shift : 16u;
    uint32_t entries = 1u << BASE_MAX(BASE_MIN(shift, 16u), 5u);
    uint64_t stride = base_align_up(base_align_up((uint64_t)entries * 8, NV_USERD_SIZE) + NV_USERD_SIZE, 64 * 1024);
    if ((s = nv_mem_alloc(dev, 2 * stride, DRV_MEM_DEVICE | DRV_MEM_CPU | DRV_MEM_LOW, &nv->gpfifo_area)))
        return base_err_prefix(s, "%s bring-up: the GPFIFO rings", id);
    nv->ring_entries = entries;
    if ((s = channels_up(dev, nv))) return s;

    hcq_device_props *pr = &dev->props;
    snprintf(pr->name, sizeof pr->name, "%.95s", name);
    strcpy(pr->kind, "NV");
    unsigned maj = (nv->sm_version >> 8) & 0xf, min = nv->sm_version & 0xf;
    snprintf(pr->arch, sizeof pr->arch, "sm_%u%u", maj, min);
    pr->is_mock = p->is_mock;
    snprintf(pr->target, sizeof pr->target, "%.20s", pr->arch);
    if (pr->is_mock) {
        /* the mock runs real cubins on its SASS executor (by default where
         * nvdisasm is, HCQ_MOCK_SHADER=isa; compiler/isa.h) or as their host
         * twins where the tools that make both are here, else the kernel IR
         * mock cubins carry */
        dev->mock_shader = drv_mock_shader(pr->arch, "cubins (clang -> PTX -> ptxas)", pr->target, sizeof pr->target,
                                           pr->shader, sizeof pr->shader);
        BASE_LOG(1, "%s (mock %s): target %s; kernels run as %s", id, name, pr->target, pr->shader);
    }
    snprintf(pr->driver_version, sizeof pr->driver_version, "%.31s", p->version);
    snprintf(pr->pci_address, sizeof pr->pci_address, "%04x:%02x:%02x.%x", nv->card->pci_domain, nv->card->pci_bus,
             nv->card->pci_slot, nv->card->pci_function);
    pr->compute_units = nv->num_sms;
    pr->memory_bytes = nv->vram_bytes;
    pr->memory_free_bytes = nv->vram_free_bytes;
    /* the shader clock needs the CLK controls, which differ by driver; not read yet (0 = unknown) */
    pr->max_threads_per_group = 1024;
    pr->max_block[0] = 1024;
    pr->max_block[1] = 1024;
    pr->max_block[2] = 64;
    pr->max_grid[0] = 0x7fffffffu;
    pr->max_grid[1] = 65535;
    pr->max_grid[2] = 65535;
    pr->max_local_bytes = 48 * 1024; /* static shared memory per block */
    dev->ts_mul = dev->ts_div = 1;   /* semaphore timestamps are nanoseconds */
    dev->stream_format[NV_CH_COMPUTE] = dev->stream_format[NV_CH_COPY] = "nv-gpfifo";
    dev->stream_arch[NV_CH_COMPUTE] = nv->gen->compute_cls;
    dev->stream_arch[NV_CH_COPY] = nv->gen->copy_cls;
    /* the paths no vendor source settles, tried before the device is used */
    if ((s = nv_selftest(dev))) return s;
    snprintf(pr->engines, sizeof pr->engines, "%s: compute %s (0x%04x), copy %s (0x%04x), channel %s (0x%04x), QMD V0%d",
             nv->gen->name, class_name(nv->gen->compute_cls), nv->gen->compute_cls, class_name(nv->gen->copy_cls),
             nv->gen->copy_cls, class_name(nv->gen->channel_cls), nv->gen->channel_cls,
             nv->qmd_ver == NV_QMD_V04 ? 4 : 3);
    nv->fixed_bytes = nv->sync.size + nv->gpfifo_area.size + nv->ch[0].pb.size + nv->ch[1].pb.size +
                      nv->ch[0].notifier.size + nv->ch[1].notifier.size;
    pr->fixed_memory_bytes = nv->fixed_bytes; /* mem/ adds the kernarg ring, staging and signals */
    BASE_LOG(1, "%s: %s, %s, %u SMs, %llu MiB, driver %s, classes 0x%04x/0x%04x, QMD V0%d, %u GPFIFO entries", id,
             name, nv->gen->name, nv->num_sms, (unsigned long long)(nv->vram_bytes >> 20), p->version,
             nv->gen->compute_cls, nv->gen->copy_cls, nv->qmd_ver == NV_QMD_V04 ? 4 : 3, entries);
    return HCQ_OK;
}

hcq_status nv_open(hcq_device *dev, uint32_t index)
{
    nv_dev *nv = base_calloc(1, sizeof *nv);
    if (!nv) return HCQ_ENOMEM;
    pthread_mutex_init(&nv->sync_lock, NULL);
    dev->priv = nv;
    hcq_status s = bring_up(dev, nv, index);
    if (s) {
        char msg[1536];
        snprintf(msg, sizeof msg, "%s", hcq_error_message());
        nv_close(dev);
        return base_err(s, "%s", msg);
    }
    return HCQ_OK;
}
