/* fake_libcxi.c - libcxi's four service functions, for test_pnet_cxi.t:
 * every call is appended to the file FAKE_CXI_LOG; a device whose number
 * is FAKE_CXI_FAIL_DEV refuses to allocate.  Service ids are 100 + the
 * device number. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* the CXI driver's service descriptor layout, as pnet_cxi.c sends it */
struct fake_desc {
    uint8_t restricted_members : 1, restricted_vnis : 1, restricted_tcs : 1,
        resource_limits : 1, enable : 1, is_system_svc : 1, cntr_pool_id : 2;
    uint8_t num_vld_vnis;
    uint16_t vnis[4];
    bool tcs[5];
    struct {
        uint32_t id;
        int type;
    } members[2];
    struct {
        uint16_t max, res;
    } limits[8];
    unsigned int svc_id;
};

struct fake_dev {
    uint32_t id;
};

static void say(const char *fmt, unsigned a, unsigned b)
{
    const char *path = getenv("FAKE_CXI_LOG");
    FILE *f          = path != NULL ? fopen(path, "a") : NULL;

    if (f != NULL) {
        fprintf(f, fmt, a, b);
        fclose(f);
    }
}

int cxil_open_device(uint32_t dev_id, struct fake_dev **dev)
{
    *dev = malloc(sizeof(**dev));
    if (*dev == NULL) {
        return -ENOMEM;
    }
    (*dev)->id = dev_id;
    return 0;
}

void cxil_close_device(struct fake_dev *dev)
{
    free(dev);
}

int cxil_alloc_svc(struct fake_dev *dev, const struct fake_desc *d,
                   void *fail_info)
{
    const char *fail = getenv("FAKE_CXI_FAIL_DEV");
    FILE *f;
    const char *path = getenv("FAKE_CXI_LOG");

    (void)fail_info;
    if (fail != NULL && (uint32_t)atoi(fail) == dev->id) {
        say("refuse dev=%u%.0u\n", dev->id, 0);
        return -ENOSPC;
    }
    f = path != NULL ? fopen(path, "a") : NULL;
    if (f != NULL) {
        fprintf(f,
                "alloc dev=%u members=%d vnis=%d tcs=%d enable=%d "
                "uid=%u type=%d nvnis=%u",
                dev->id, d->restricted_members, d->restricted_vnis,
                d->restricted_tcs, d->enable, d->members[0].id,
                d->members[0].type, d->num_vld_vnis);
        for (unsigned i = 0; i < d->num_vld_vnis && i < 4; i++) {
            fprintf(f, "%s%u", i == 0 ? " vni=" : ",", d->vnis[i]);
        }
        fprintf(f, "\n");
        fclose(f);
    }
    return 100 + (int)dev->id;
}

int cxil_destroy_svc(struct fake_dev *dev, unsigned int svc_id)
{
    say("destroy dev=%u svc=%u\n", dev->id, svc_id);
    return 0;
}
