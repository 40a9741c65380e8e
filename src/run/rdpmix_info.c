/* rdpmix_info.c - rdpmix-info: what this rdpmix is, how it was built, what
 * each API function supports, the trust mode of collective payloads
 * between servers, and the RDPMIX_* settings in force.
 *
 *   rdpmix-info              everything below but the query
 *   rdpmix-info --config     every setting: value in force and its source
 *   rdpmix-info --attrs      the attributes each function supports
 *   rdpmix-info --query      ask a server (PMIX_QUERY_ATTRIBUTE_SUPPORT)
 *   --json                   the same as one JSON object
 */
#include "config.h"
#include "core/server/trust.h"
#include "core/util/config_table.h"
#include "core/util/directive.h"
#include "pnet/pnet.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>
#include <pmix_tool.h>

#ifndef RDPMIX_CONFIGURE_ARGS
#define RDPMIX_CONFIGURE_ARGS ""
#endif

static bool json;

/* ---- output: text, or JSON members of one object ---- */

static void json_string(const char *s)
{
    putchar('"');
    for (; s != NULL && *s != '\0'; s++) {
        if (*s == '"' || *s == '\\') {
            printf("\\%c", *s);
        } else if ((unsigned char)*s < 0x20) {
            printf("\\u%04x", (unsigned)*s);
        } else {
            putchar(*s);
        }
    }
    putchar('"');
}

/* "name": "value" (JSON) or "name: value" (text); @a first: no comma */
static void field(const char *name, const char *value, bool first)
{
    if (json) {
        printf("%s", first ? "" : ", ");
        json_string(name);
        printf(": ");
        json_string(value != NULL ? value : "");
    } else {
        printf("  %-22s %s\n", name,
               value != NULL && value[0] != '\0' ? value : "(unset)");
    }
}

static void section(const char *name, bool first)
{
    if (json) {
        printf("%s", first ? "" : ",\n ");
        json_string(name);
        printf(": {");
    } else {
        printf("%s%s:\n", first ? "" : "\n", name);
    }
}

static void section_end(void)
{
    if (json) {
        printf("}");
    }
}

/* ---- the parts ---- */

static void print_version(bool first)
{
    section("version", first);
    field("rdpmix", PACKAGE_VERSION, true);
    field("PMIx_Get_version", PMIx_Get_version(), false);
    section_end();
}

/* the versions configure found (pkg-config): the layering keeps UCX,
 * hwloc and libevent headers to their own layers */
static void print_build(bool first)
{
    section("build", first);
    field("configure", RDPMIX_CONFIGURE_ARGS, true);
    field("ucx", RDPMIX_UCX_VERSION, false);
    field("hwloc", RDPMIX_HWLOC_VERSION, false);
    field("libevent", RDPMIX_LIBEVENT_VERSION, false);
    field("libdir", RDPMIX_LIBDIR, false);
    field("bindir", RDPMIX_BINDIR, false);
    section_end();
}

/* the value in force of setting @a id, as text */
static const char *value_of(rdp_cfg_id_t id)
{
    const char *v = rdp_cfg_string(id);

    return v != NULL ? v : "";
}

static void print_settings(const char *title, const rdp_cfg_id_t *ids, size_t n,
                           bool first)
{
    section(title, first);
    for (size_t i = 0; i < n; i++) {
        field(rdp_cfg_setting(ids[i])->name, value_of(ids[i]), i == 0);
    }
    section_end();
}

/* The trust mode a job launched with these settings gets ("trust follows
 * the fabric", docs/design.md): whether its collective payloads between
 * servers carry a MAC.  @a pnet_ok: RDPMIX_PNET selected modules (an
 * invalid RDPMIX_PNET stops every launch, so there is no mode). */
static void print_trust(bool pnet_ok)
{
    char mods[128];
    enum rdp_trust_mode mode = rdp_srv_trust_mode(mods, sizeof(mods));
    static const char *const payloads[] = {
        [RDP_TRUST_FULL]     = "every collective payload carries a MAC",
        [RDP_TRUST_ISOLATED] = "open (no MAC) in collectives of one job "
                               "these modules set up; authenticated "
                               "across jobs",
        [RDP_TRUST_TRUSTED]  = "open (no MAC) in every collective",
    };

    if (!pnet_ok && mode != RDP_TRUST_TRUSTED) {
        section("trust", false);
        field("mode", "unknown (RDPMIX_PNET is invalid)", true);
        section_end();
        return;
    }
    section("trust", false);
    field("mode", rdp_srv_trust_mode_name(mode), true);
    field("isolating_modules", mods[0] != '\0' || json ? mods : "(none)",
          false);
    field("payloads", payloads[mode], false);
    field("headers", "always authenticated", false);
    field(rdp_cfg_setting(RDP_CFG_TRUSTED_NETWORK)->name,
          value_of(RDP_CFG_TRUSTED_NETWORK), false);
    field(rdp_cfg_setting(RDP_CFG_PNET)->name, value_of(RDP_CFG_PNET), false);
    section_end();
}

static void print_engine_and_pnet(bool first)
{
    static const rdp_cfg_id_t engine[] = {
        RDP_CFG_COLL_ALG,      RDP_CFG_COLL_SEG_BYTES, RDP_CFG_UCX_MODULE,
        RDP_CFG_UCX_EAGER_MAX, RDP_CFG_UCX_SPIN_US,    RDP_CFG_SHM_MIN,
    };
    static const rdp_cfg_id_t pnet[] = {
        RDP_CFG_PNET,
        RDP_CFG_PNET_CONF,
        RDP_CFG_PNET_STATE_DIR,
    };

    print_settings("engine", engine, sizeof(engine) / sizeof(engine[0]), first);
    print_settings("pnet", pnet, sizeof(pnet) / sizeof(pnet[0]), false);
    /* what RDPMIX_PNET selects on this machine */
    if (rdp_pnet_select(rdp_cfg_env(RDP_CFG_PNET)) == PMIX_SUCCESS) {
        if (json) {
            printf(",\n ");
            json_string("pnet_modules");
            printf(": ");
            json_string(rdp_pnet_selected());
        } else {
            printf("  %-22s %s\n", "modules selected",
                   rdp_pnet_selected()[0] != '\0' ? rdp_pnet_selected()
                                                  : "(none)");
        }
        print_trust(true);
        rdp_pnet_cleanup();
    } else {
        print_trust(false);
    }
}

static const char *const kind_names[] = {"client", "server", "tool"};

static void print_attrs(bool first)
{
    const char *fn;
    rdp_api_kind_t kind;

    section("attributes", first);
    for (size_t i = 0; (fn = rdp_attr_function_name(i, &kind)) != NULL; i++) {
        const char *a;

        if (json) {
            printf("%s", i == 0 ? "" : ", ");
            json_string(fn);
            printf(": {\"api\": \"%s\", \"any_key\": %s, \"supports\": [",
                   kind_names[kind], rdp_attr_takes_any(fn) ? "true" : "false");
        } else {
            printf("  %s (%s)%s\n", fn, kind_names[kind],
                   rdp_attr_takes_any(fn) ? ": any key (the host's data)" : "");
        }
        for (size_t k = 0; (a = rdp_attr_supported_by(fn, k)) != NULL; k++) {
            if (json) {
                printf("%s", k == 0 ? "" : ", ");
                json_string(a);
            } else {
                printf("    %-32s %s\n", PMIx_Get_attribute_name(a), a);
            }
        }
        if (json) {
            printf("]}");
        }
    }
    section_end();
}

static void print_config(bool first)
{
    section("config", first);
    for (unsigned i = 0; i < RDP_CFG_COUNT; i++) {
        const rdp_cfg_setting_t *st = rdp_cfg_setting((rdp_cfg_id_t)i);
        const char *v               = value_of((rdp_cfg_id_t)i);
        const char *src             = rdp_cfg_source((rdp_cfg_id_t)i);

        if (json) {
            printf("%s", i == 0 ? "" : ", ");
            json_string(st->name);
            printf(": {\"type\": \"%s\", \"value\": ",
                   rdp_cfg_type_name(st->type));
            json_string(v);
            printf(", \"source\": \"%s\", \"default\": ", src);
            json_string(st->dflt != NULL ? st->dflt : "");
            printf(", \"help\": ");
            json_string(st->help);
            printf("}");
        } else {
            printf("  %s=%s  (%s, %s)\n      %s\n", st->name,
                   v[0] != '\0' ? v : "(unset)", rdp_cfg_type_name(st->type),
                   src, st->help);
        }
    }
    section_end();
}

/* Ask a server as a tool; what it answers is printed as it comes. */
static int print_query(bool first)
{
    pmix_proc_t me;
    pmix_query_t *q;
    pmix_info_t *results = NULL;
    size_t nresults      = 0;
    pmix_status_t status = PMIx_tool_init(&me, NULL, 0);

    section("query", first);
    if (status != PMIX_SUCCESS) {
        field("status", PMIx_Error_string(status), true);
        section_end();
        fprintf(stderr, "rdpmix-info: no server to ask (%s)\n",
                PMIx_Error_string(status));
        return 1;
    }
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(status, q->keys, PMIX_QUERY_ATTRIBUTE_SUPPORT);
    PMIX_INFO_CREATE(q->qualifiers, 3);
    q->nqual = 3;
    PMIX_INFO_LOAD(&q->qualifiers[0], PMIX_CLIENT_FUNCTIONS, "all",
                   PMIX_STRING);
    PMIX_INFO_LOAD(&q->qualifiers[1], PMIX_SERVER_FUNCTIONS, "all",
                   PMIX_STRING);
    PMIX_INFO_LOAD(&q->qualifiers[2], PMIX_TOOL_FUNCTIONS, "all", PMIX_STRING);
    status = PMIx_Query_info(q, 1, &results, &nresults);
    field("status", PMIx_Error_string(status), true);
    for (size_t i = 0; i < nresults; i++) {
        char *s = PMIx_Info_string(&results[i]);

        field(results[i].key, s, false);
        free(s);
    }
    section_end();
    PMIX_INFO_FREE(results, nresults);
    PMIX_QUERY_FREE(q, 1);
    PMIx_tool_finalize();
    return status == PMIX_SUCCESS ? 0 : 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: rdpmix-info [--config] [--attrs] [--query] [--json]\n"
               "  (no part named: version, build, engine, pnet, trust, "
               "attributes)\n");
}

int main(int argc, char **argv)
{
    bool config = false, attrs = false, query = false, all;
    int rc = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0) {
            config = true;
        } else if (strcmp(argv[i], "--attrs") == 0) {
            attrs = true;
        } else if (strcmp(argv[i], "--query") == 0) {
            query = true;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "rdpmix-info: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    all = !config && !attrs && !query;
    if (json) {
        printf("{");
    }
    if (all) {
        print_version(true);
        print_build(false);
        print_engine_and_pnet(false);
    }
    if (config) {
        print_config(true);
    }
    if (all || attrs) {
        print_attrs(!all && !config);
    }
    if (query) {
        rc = print_query(!config && !attrs);
    }
    if (json) {
        printf("}\n");
    }
    return rc;
}
