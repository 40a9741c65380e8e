/* pnet_cxi.c - a node's CXI services through libcxi, loaded at run time */
#include "config.h"
#include "pnet/pnet_int.h"
#include "core/util/log.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * libcxi (HPE's shs-libcxi) is not linked: a node without it must run, and
 * one with it must not need a rebuild.  Its four functions used here:
 *
 *   int  cxil_open_device(uint32_t dev_id, struct cxil_dev **dev);
 *   void cxil_close_device(struct cxil_dev *dev);
 *   int  cxil_alloc_svc(struct cxil_dev *dev, const struct cxi_svc_desc *,
 *                       struct cxi_svc_fail_info *fail_info);
 *   int  cxil_destroy_svc(struct cxil_dev *dev, unsigned int svc_id);
 *
 * (negative errno on failure; alloc returns the new service id > 0).
 * Without libcxi's headers, the service descriptor is declared here with
 * the layout of the CXI driver's uapi struct cxi_svc_desc; the sizes of
 * its arrays are the driver's constants (4 VNIs, 2 members, 8 resource
 * types; 4 or 5 traffic classes, the same layout either way: padding).
 * rdpmix asks for a service restricted to the job's uid (a member) and
 * VNIs; traffic classes and resources stay unrestricted.
 */

#define CXI_SVC_VNIS    4 /* CXI_SVC_MAX_VNIS */
#define CXI_SVC_TCS     5 /* CXI_TC_MAX */
#define CXI_SVC_MEMBERS 2 /* CXI_SVC_MAX_MEMBERS */
#define CXI_SVC_RSRCS   8 /* CXI_RSRC_TYPE_MAX */
#define CXI_MEMBER_UID  1 /* CXI_SVC_MEMBER_UID */

typedef struct cxi_svc_desc_abi {
    uint8_t restricted_members : 1, restricted_vnis : 1, restricted_tcs : 1,
        resource_limits : 1, enable : 1, is_system_svc : 1, cntr_pool_id : 2;
    uint8_t num_vld_vnis;
    uint16_t vnis[CXI_SVC_VNIS];
    bool tcs[CXI_SVC_TCS];
    struct {
        uint32_t id; /* a uid or gid */
        int type;
    } members[CXI_SVC_MEMBERS];
    struct {
        uint16_t max, res;
    } limits[CXI_SVC_RSRCS];
    unsigned int svc_id;
} cxi_svc_desc_abi_t;

_Static_assert(sizeof(cxi_svc_desc_abi_t) == 68,
               "the CXI service descriptor must keep the driver's layout");

typedef int (*cxi_open_fn)(uint32_t dev_id, void **dev);
typedef void (*cxi_close_fn)(void *dev);
typedef int (*cxi_alloc_svc_fn)(void *dev, const cxi_svc_desc_abi_t *desc,
                                void *fail_info);
typedef int (*cxi_destroy_svc_fn)(void *dev, unsigned int svc_id);

struct rdp_pnet_cxi {
    void *lib;
    cxi_open_fn open;
    cxi_close_fn close;
    cxi_alloc_svc_fn alloc_svc;
    cxi_destroy_svc_fn destroy_svc;
};

/* dlsym's object pointer as a function pointer (POSIX allows it) */
static void *symbol(void *lib, const char *name, const char *path, bool *ok)
{
    void *fn = dlsym(lib, name);

    if (fn == NULL) {
        rdp_log_warn(PNET, "sshot: %s has no %s: not a libcxi rdpmix can use",
                     path, name);
        *ok = false;
    }
    return fn;
}

pmix_status_t rdp_pnet_cxi_load(const char *path, rdp_pnet_cxi_t **cxi_p)
{
    rdp_pnet_cxi_t *cxi;
    bool ok = true;
    void *lib;

    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        rdp_log_debug(PNET, "sshot: no libcxi here (%s)", dlerror());
        return PMIX_ERR_NOT_FOUND;
    }
    cxi = calloc(1, sizeof(*cxi));
    if (cxi == NULL) {
        dlclose(lib);
        return PMIX_ERR_NOMEM;
    }
    cxi->lib                    = lib;
    *(void **)&cxi->open        = symbol(lib, "cxil_open_device", path, &ok);
    *(void **)&cxi->close       = symbol(lib, "cxil_close_device", path, &ok);
    *(void **)&cxi->alloc_svc   = symbol(lib, "cxil_alloc_svc", path, &ok);
    *(void **)&cxi->destroy_svc = symbol(lib, "cxil_destroy_svc", path, &ok);
    if (!ok) {
        rdp_pnet_cxi_unload(cxi);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    *cxi_p = cxi;
    return PMIX_SUCCESS;
}

void rdp_pnet_cxi_unload(rdp_pnet_cxi_t *cxi)
{
    if (cxi != NULL) {
        dlclose(cxi->lib);
        free(cxi);
    }
}

/* The device number of "cxiN"; false for another name */
static bool device_id(const char *name, size_t len, uint32_t *id_p)
{
    char *end;
    unsigned long id;

    if (len < 4 || strncmp(name, "cxi", 3) != 0 || name[3] < '0'
        || name[3] > '9') {
        return false;
    }
    id = strtoul(name + 3, &end, 10);
    if ((size_t)(end - name) != len || id > UINT32_MAX) {
        return false;
    }
    *id_p = (uint32_t)id;
    return true;
}

/* Allocate the job's service on device @a id; its service id or -errno */
static int alloc_on(const rdp_pnet_cxi_t *cxi, uint32_t id,
                    const cxi_svc_desc_abi_t *desc)
{
    /* larger than the driver's fail info, which may grow */
    uint64_t fail_info[32] = {0};
    void *dev              = NULL;
    int rc;

    rc = cxi->open(id, &dev);
    if (rc != 0) {
        return rc < 0 ? rc : -1;
    }
    rc = cxi->alloc_svc(dev, desc, fail_info);
    cxi->close(dev);
    return rc;
}

static void destroy_on(const rdp_pnet_cxi_t *cxi, uint32_t id,
                       unsigned int svc_id)
{
    void *dev = NULL;
    int rc    = cxi->open(id, &dev);

    if (rc == 0) {
        rc = cxi->destroy_svc(dev, svc_id);
        cxi->close(dev);
    }
    if (rc != 0) {
        rdp_log_warn(PNET,
                     "sshot: libcxi cannot destroy service %u on cxi%u "
                     "(%d)",
                     svc_id, id, rc);
    }
}

static pmix_status_t fill_desc(uid_t uid, const uint32_t *vnis, size_t nvnis,
                               cxi_svc_desc_abi_t *desc)
{
    if (nvnis == 0 || nvnis > CXI_SVC_VNIS) {
        rdp_log_error(PNET,
                      "sshot: a libcxi service holds 1 to %d VNIs, "
                      "the job has %zu (sshot_vnis_per_job)",
                      CXI_SVC_VNIS, nvnis);
        return PMIX_ERR_BAD_PARAM;
    }
    memset(desc, 0, sizeof(*desc));
    desc->restricted_members = 1;
    desc->restricted_vnis    = 1;
    desc->enable             = 1;
    desc->num_vld_vnis       = (uint8_t)nvnis;
    for (size_t i = 0; i < nvnis; i++) {
        desc->vnis[i] = (uint16_t)vnis[i];
    }
    desc->members[0].id   = (uint32_t)uid;
    desc->members[0].type = CXI_MEMBER_UID;
    return PMIX_SUCCESS;
}

/* Destroy the services of ids[0..n) on the devices listed first in
 * @a devices (a rollback or a release) */
static void destroy_first(const rdp_pnet_cxi_t *cxi, const char *devices,
                          const unsigned *ids, size_t n)
{
    const char *p = devices;

    for (size_t i = 0; i < n; i++) {
        size_t len = strcspn(p, ",");
        uint32_t id;

        if (device_id(p, len, &id)) {
            destroy_on(cxi, id, ids[i]);
        }
        p += len + (p[len] == ',');
    }
}

pmix_status_t rdp_pnet_cxi_setup(const rdp_pnet_cxi_t *cxi, const char *devices,
                                 uid_t uid, const uint32_t *vnis, size_t nvnis,
                                 char *svc_ids, size_t len)
{
    cxi_svc_desc_abi_t desc;
    unsigned ids[RDP_PNET_CXI_MAX_DEVICES];
    size_t n = 0, used = 0;
    const char *p = devices;
    pmix_status_t status;

    status = fill_desc(uid, vnis, nvnis, &desc);
    while (status == PMIX_SUCCESS && *p != '\0') {
        size_t dlen = strcspn(p, ",");
        uint32_t id;
        int rc;

        if (!device_id(p, dlen, &id) || n == RDP_PNET_CXI_MAX_DEVICES) {
            rdp_log_error(PNET,
                          "sshot: '%.*s' is no CXI device name (cxiN; "
                          "at most %d)",
                          (int)dlen, p, RDP_PNET_CXI_MAX_DEVICES);
            status = PMIX_ERR_BAD_PARAM;
            break;
        }
        rc = alloc_on(cxi, id, &desc);
        if (rc <= 0) {
            rdp_log_error(PNET,
                          "sshot: libcxi cannot allocate a service on "
                          "cxi%u: %s",
                          id, strerror(rc < 0 ? -rc : EINVAL));
            status = PMIX_ERR_NO_PERMISSIONS;
            break;
        }
        ids[n++] = (unsigned)rc;
        used += (size_t)snprintf(svc_ids + used, len > used ? len - used : 0,
                                 "%s%d", used > 0 ? "," : "", rc);
        p += dlen + (p[dlen] == ',');
    }
    if (status == PMIX_SUCCESS && used >= len) {
        status = PMIX_ERR_BAD_PARAM;
    }
    if (status != PMIX_SUCCESS) {
        destroy_first(cxi, devices, ids, n);
    }
    return status;
}

void rdp_pnet_cxi_release(const rdp_pnet_cxi_t *cxi, const char *devices,
                          const char *svc_ids)
{
    unsigned ids[RDP_PNET_CXI_MAX_DEVICES];
    size_t n = 0;
    char *end;

    for (const char *p = svc_ids; *p != '\0' && n < RDP_PNET_CXI_MAX_DEVICES;
         p             = end + (*end == ',')) {
        ids[n++] = (unsigned)strtoul(p, &end, 10);
        if (end == p) {
            break;
        }
    }
    destroy_first(cxi, devices, ids, n);
}
