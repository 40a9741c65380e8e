/* fabric.c - does this node have a device for Open MPI's MTLs */
#include "config.h"
#include "run/fabric.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* Directories and the name prefixes of the devices in them ("": any). */
static const struct {
    const char *dir;
    const char *prefix;
} devices[] = {
    {"/sys/class/infiniband", ""},
    {"/dev", "hfi1_"},
    {"/dev", "ipath"},
    {"/dev", "cxi"},
};

static bool dir_has(const char *root, const char *dir, const char *prefix,
                    char *found, size_t len)
{
    char path[4096];
    struct dirent *e;
    DIR *d;
    bool hit = false;

    snprintf(path, sizeof(path), "%s%s", root, dir);
    d = opendir(path);
    if (d == NULL) {
        return false;
    }
    while (!hit && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.'
            || strncmp(e->d_name, prefix, strlen(prefix)) != 0) {
            continue;
        }
        hit = true;
        if (found != NULL && len > 0) {
            snprintf(found, len, "%s/%s", dir, e->d_name);
        }
    }
    closedir(d);
    return hit;
}

bool rdp_run_fabric_device(const char *root, char *found, size_t len)
{
    if (root == NULL) {
        root = "";
    }
    for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
        if (dir_has(root, devices[i].dir, devices[i].prefix, found, len)) {
            return true;
        }
    }
    return false;
}
