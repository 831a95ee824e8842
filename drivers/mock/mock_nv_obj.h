/* drivers/mock/mock_nv_obj.h: the NV mock's RM object tree, shared by the
 * files that implement RM's escapes: mock_nv_rm.c (the tree, RM_ALLOC's
 * copy, RM_FREE, RM_MAP_MEMORY, RM_ALLOC_MEMORY, the escape dispatch),
 * mock_nv_alloc.c (RM_ALLOC's classes),
 * mock_nv_ctrl.c (RM_CONTROL) and mock_nv_vmm.c (NV01_MEMORY_VIRTUAL and
 * RM_MAP_MEMORY_DMA / RM_UNMAP_MEMORY_DMA). Everything here is called with
 * mnv_rm_lock held. Internal to drivers/mock. */
#ifndef HCQ_DRIVERS_MOCK_NV_OBJ_H
#define HCQ_DRIVERS_MOCK_NV_OBJ_H

#include "drivers/mock/mock_nv.h"

typedef enum mnv_okind {
    O_CLIENT = 1,
    O_DEVICE,
    O_SUBDEVICE,
    O_MEMORY,
    O_VIRTUAL, /* NV01_MEMORY_VIRTUAL: a range of a vaspace */
    O_USERMODE,
    O_VASPACE,
    O_TSG,
    O_CTXSHARE,
    O_CHANNEL,
    O_ENGINE,
    O_DEBUGGER,
} mnv_okind;

typedef struct mnv_tsg {
    atomic_bool scheduled;
    mnv_fault_ring gr_faults; /* its graphics context's MMU faults */
    uint32_t hvaspace;  /* the group's vaspace (0: the device's) */
    uint32_t nchan;     /* channels in the group */
    bool legacy;        /* a channel came without a context share: RM's legacy mode */
    uint64_t subctx;    /* the subcontext ids (VEIDs) its context shares hold */
} mnv_tsg;

/* a memory object mapped into a virtual range (RM_MAP_MEMORY_DMA) */
typedef struct mnv_dma_map {
    uint32_t hmemory;
    uint64_t va, size;
    bool reserved; /* the mock reserved the address (RM chose it): released at unmap */
    struct mnv_dma_map *next;
} mnv_dma_map;

typedef struct mnv_obj {
    uint32_t handle, parent, client, cls;
    mnv_okind kind;
    mnv_gpu *gpu;
    mnv_fd *owner;     /* clients: the ctl fd that made them */
    mock_bo *bo;       /* memory, usermode */
    uint64_t size;     /* memory */
    uint64_t host_va;  /* memory described by address (no bo) */
    uint32_t flags;    /* vaspace flags (a context share's or a channel's: its vaspace's); a device's vaMode */
    bool uvm_bound;    /* channel: registered with UVM (UVM_REGISTER_CHANNEL binds its context) */
    uint32_t uvm_pdb;  /* vaspace: UVM registrations that set its page directory */
    uint32_t subctx;   /* context share: its subcontext id */
    uint32_t target_client, target; /* debugger: the compute object it debugs */
    mnv_tsg *tsg;      /* channel groups */
    mnv_chan *chan;    /* channels */
    uint32_t chid;
    uint64_t va_lo, va_hi; /* O_VIRTUAL: the range, inclusive */
    mnv_dma_map *maps;     /* O_VIRTUAL: what is mapped into it */
    struct mnv_obj *next;
} mnv_obj;

extern pthread_mutex_t mnv_rm_lock;

/* object h of client, or the client itself when h == client */
mnv_obj *mnv_find(uint32_t client, uint32_t h);
/* the client h, owned by fd owner (NULL: any owner) */
mnv_obj *mnv_find_client(uint32_t h, const mnv_fd *owner);
/* the first object of the tree (then ->next) */
mnv_obj *mnv_obj_first(void);
/* the configured driver's major version: 580 */
uint32_t mnv_major(void);

/* ** RM_CONTROL (mock_nv_ctrl.c): RM's answer to the control in c */
uint32_t mnv_rm_control(mnv_fd *f, nv_rm_control *c);

/* ** virtual memory (mock_nv_vmm.c) */
/* allocates an NV01_MEMORY_VIRTUAL under device parent; the parameters are
 * RM's copy (limit is written back) */
uint32_t mnv_vmm_alloc(mnv_obj *parent, uint32_t client, uint32_t handle, nv_memory_virtual_alloc *p,
                       mnv_obj **out);
uint32_t mnv_vmm_map(mnv_fd *f, nv_rm_map_memory_dma *a);
uint32_t mnv_vmm_unmap(mnv_fd *f, nv_rm_unmap_memory_dma *a);
/* a virtual object is freed: its mappings go */
void mnv_vmm_release(mnv_obj *o);
/* memory object hmem of client is freed: RM unmaps it from every virtual range first */
void mnv_vmm_memory_freed(uint32_t client, uint32_t hmem);
/* frees o and everything below it (children first) */
void mnv_obj_free(mnv_obj *o);
/* the next channel id (the tree's; restarts at mock_reset) */
uint32_t mnv_obj_next_chid(void);

/* ** RM_ALLOC's classes (mock_nv_alloc.c) */
/* the resource server's checks before a constructor: RM's status, else
 * NV_OK with *parent set */
uint32_t mnv_alloc_prologue(uint32_t client, uint32_t hparent, uint32_t hnew, uint32_t cls, const void *p,
                            mnv_obj **parent);
/* allocates class cls for RM_ALLOC a; p is RM's copy of the parameters
 * (NULL when none), which goes back to the caller on success */
uint32_t mnv_alloc_class(mnv_fd *f, nv_rm_alloc *a, uint32_t cls, void *p);

/* creates an object (handle 0: RM picks one) and links it into the tree */
mnv_obj *mnv_obj_new(uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls, mnv_okind kind, mnv_gpu *gpu);

#endif
