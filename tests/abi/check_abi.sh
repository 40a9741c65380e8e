#!/bin/sh
# check_abi.sh - our public headers against OpenPMIx 4.2.2's (ABI.md §4).
# TAP output, one test point per kind of fact: sizes, offsets, integer
# constants, enumerators and attribute strings (from abi_probe built twice),
# whether abi_names.h still lists every shared constant, and whether every
# function OpenPMIx declares is declared by us with a compatible type.
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-.}
ours_probe=$builddir/tests/abi/abi_probe_ours
theirs_probe=$builddir/tests/abi/abi_probe_openpmix
cc=${CC:-cc}
openpmix_cflags=${OPENPMIX_CFLAGS:-$(pkg-config --cflags pmix 2>/dev/null)}

export LC_ALL=C
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0

ok() {
    n=$((n + 1))
    echo "ok $n - $*"
}

not_ok() {
    n=$((n + 1))
    echo "not ok $n - $*"
}

skip() {
    n=$((n + 1))
    echo "ok $n # SKIP $*"
}

# show at most 20 lines of a file as TAP diagnostics
diag() {
    head -n 20 "$1" | sed 's/^/# /'
}

# ---- the two probe outputs ------------------------------------------------
if "$ours_probe" > "$tmp/ours" && "$theirs_probe" > "$tmp/theirs"; then
    ok "both probes ran ($(wc -l < "$tmp/ours") facts)"
else
    not_ok "both probes ran (build tests/abi/abi_probe_ours and _openpmix)"
    echo "1..$n"
    exit 0
fi

# "category name value": same names in both?
cut -d' ' -f1,2 "$tmp/ours" | sort > "$tmp/ours.names"
cut -d' ' -f1,2 "$tmp/theirs" | sort > "$tmp/theirs.names"
if cmp -s "$tmp/ours.names" "$tmp/theirs.names"; then
    ok "both probes report the same facts"
else
    not_ok "both probes report the same facts"
    diff "$tmp/ours.names" "$tmp/theirs.names" > "$tmp/d"
    diag "$tmp/d"
fi

for cat in sizeof offsetof const enum string; do
    # name<TAB>value, sorted by name
    sed -n "s/^$cat \([^ ]*\) /\1	/p" "$tmp/ours" | sort > "$tmp/o.$cat"
    sed -n "s/^$cat \([^ ]*\) /\1	/p" "$tmp/theirs" | sort > "$tmp/t.$cat"
    total=$(wc -l < "$tmp/o.$cat")
    join -t'	' "$tmp/o.$cat" "$tmp/t.$cat" \
        | awk -F'	' '$2 != $3 { printf "%s ours=%s openpmix=%s\n", $1, $2, $3 }' \
        > "$tmp/bad"
    bad=$(wc -l < "$tmp/bad")
    if [ "$total" -gt 0 ] && [ "$bad" -eq 0 ]; then
        ok "$cat: all $total values equal"
    else
        not_ok "$cat: $bad of $total values differ"
        diag "$tmp/bad"
    fi
done

# ---- is abi_names.h complete? --------------------------------------------
if command -v "$cc" > /dev/null 2>&1 && [ -n "$openpmix_cflags" ]; then
    if CC=$cc OPENPMIX_CFLAGS=$openpmix_cflags \
        sh "$srcdir/tests/abi/gen_abi_names.sh" > "$tmp/names.h" 2> "$tmp/err" \
        && cmp -s "$tmp/names.h" "$srcdir/tests/abi/abi_names.h"; then
        ok "abi_names.h lists every constant both headers define"
    else
        not_ok "abi_names.h lists every constant both headers define" \
            "(rerun tests/abi/gen_abi_names.sh)"
        diff "$srcdir/tests/abi/abi_names.h" "$tmp/names.h" > "$tmp/d"
        cat "$tmp/err" >> "$tmp/d"
        diag "$tmp/d"
    fi
else
    skip "abi_names.h completeness: no compiler or OpenPMIx headers"
fi

# ---- functions and callback types ----------------------------------------
# Declarations are taken from OpenPMIx's headers at test time (preprocessed,
# never stored): every exported function declaration and every typedef of a
# function pointer, each as one statement.
if command -v "$cc" > /dev/null 2>&1 && [ -n "$openpmix_cflags" ]; then
    printf '#include <pmix_server.h>\n#include <pmix_tool.h>\n' > "$tmp/inc.c"
    # shellcheck disable=SC2086
    $cc -E -P $openpmix_cflags "$tmp/inc.c" | tr '\n' ' ' | tr ';' '\n' \
        | sed 's/.*[}]//' > "$tmp/stmts"
    grep '__visibility__' "$tmp/stmts" | grep 'PMIx_' \
        | sed 's/.*\(__attribute__((__visibility__("default")))\)/\1/; s/$/;/' \
        > "$tmp/decls"
    grep '^ *typedef [^{]*( *[*] *[A-Za-z_0-9]* *) *(' "$tmp/stmts" \
        | sed 's/$/;/' > "$tmp/typedefs"
    sed -n 's/.*[^A-Za-z_0-9]\(PMIx_[A-Za-z_0-9]*\) *(.*/\1/p' "$tmp/decls" \
        | sort -u > "$tmp/fnames"

    {
        printf '#include <pmix_server.h>\n#include <pmix_tool.h>\n'
        echo 'void rdpmix_abi_refs(void);'
        echo 'void rdpmix_abi_refs(void) {'
        sed 's/.*/    (void)\&&;/' "$tmp/fnames"
        echo '}'
    } > "$tmp/declared.c"
    if $cc -std=gnu11 -fsyntax-only -Werror=implicit-function-declaration \
        -I"$srcdir/include" "$tmp/declared.c" > "$tmp/err" 2>&1; then
        ok "all $(wc -l < "$tmp/fnames") functions of OpenPMIx's headers are declared"
    else
        not_ok "all functions of OpenPMIx's headers are declared"
        grep -o "'PMIx_[A-Za-z_0-9]*' undeclared" "$tmp/err" | sort -u \
            > "$tmp/d"
        diag "$tmp/d"
    fi

    {
        printf '#include <pmix_server.h>\n#include <pmix_tool.h>\n'
        cat "$tmp/typedefs" "$tmp/decls"
    } > "$tmp/compatible.c"
    if $cc -std=gnu11 -fsyntax-only -I"$srcdir/include" "$tmp/compatible.c" \
        > "$tmp/err" 2>&1; then
        ok "$(wc -l < "$tmp/decls") declarations and" \
            "$(wc -l < "$tmp/typedefs") callback types match OpenPMIx's"
    else
        not_ok "declarations and callback types match OpenPMIx's"
        # one line per conflicting name, then the first compiler errors
        grep -o "conflicting types for '[^']*'" "$tmp/err" | sort -u \
            > "$tmp/d"
        grep 'error' "$tmp/err" | grep -v 'conflicting types' >> "$tmp/d"
        diag "$tmp/d"
    fi
else
    skip "function declarations: no compiler or OpenPMIx headers"
    skip "function signatures: no compiler or OpenPMIx headers"
fi

echo "1..$n"
