#!/bin/sh
# gen_enum_values.sh - every value of the Standard's enumerations that have
# a *_string function, read from the public header at build time so that a
# new constant cannot be missed by test_pretty:
#   RDP_ENUM(family, NAME)   one line per constant, in header order
# family is the type without pmix_ and _t (proc_state, status, ...).
#   src/core/util/gen_enum_values.sh include/pmix_common.h > enum_values.h
set -eu
hdr=${1:?usage: gen_enum_values.sh pmix_common.h}
echo "/* enum_values.h - generated from pmix_common.h by gen_enum_values.sh */"
awk '
BEGIN {
    split("proc_state job_state status value_cmp data_type scope data_range " \
          "persistence info_directives alloc_directive iof_channel " \
          "link_state device_type", w, " ")
    for (i in w) wanted[w[i]] = 1
    # limits and reserved ranges, not values
    skip["PMIX_DATA_TYPE_MAX"] = 1
    skip["PMIX_INFO_DIR_RESERVED"] = 1
}
function family(t) { sub(/^pmix_/, "", t); sub(/_t;?$/, "", t); return t }
/^typedef enum/ { inenum = 1; n = 0; fam = ""; next }
inenum && /^}/ {
    t = $2; f = family(t)
    if (f in wanted) for (i = 1; i <= n; i++) printf "RDP_ENUM(%s, %s)\n", f, names[i]
    inenum = 0; next
}
inenum {
    if (match($0, /PMIX_[A-Z0-9_]+/)) names[++n] = substr($0, RSTART, RLENGTH)
    next
}
/^typedef/ {
    fam = ""
    if ($0 ~ /^typedef [a-z0-9_]+ pmix_[a-z_]+_t;/) {
        f = family($3); if (f in wanted) fam = f
    }
    next
}
fam != "" && /^#define PMIX_[A-Z0-9_]+[ \t]/ {
    name = $2
    if (!(name in skip) && $3 !~ /^"/) printf "RDP_ENUM(%s, %s)\n", fam, name
}
' "$hdr"
