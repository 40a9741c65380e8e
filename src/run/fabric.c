/* fabric.c - does this node have a device for Open MPI's MTLs, and did a
 * site choose them in its Open MPI parameter files */
#include "config.h"
#include "run/fabric.h"

#include <ctype.h>
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

bool rdp_run_ompi_file_selects(const char *path, const char *framework)
{
    size_t flen = strlen(framework);
    char line[1024];
    bool selects = false;
    FILE *f      = fopen(path, "r");

    if (f == NULL) {
        return false;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *p = line;

        while (isspace((unsigned char)*p)) {
            p++;
        }
        if (strncmp(p, framework, flen) != 0) {
            continue;
        }
        p += flen;
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        if (*p != '=') {
            continue; /* another parameter, e.g. mtl_base_verbose */
        }
        p++;
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        /* the last setting wins, as in Open MPI */
        selects = *p != '^' && *p != '#' && *p != '\n' && *p != '\0';
    }
    fclose(f);
    return selects;
}
