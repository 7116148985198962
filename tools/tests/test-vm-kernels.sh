#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-vm-kernels.sh - `make vm` with PATCH=, KSRC= (a git tree of
# linux-source-6.1, left as it was) and KERNEL=FILE KDIR=<headers>, each booting
# the kernel built; ccache-cc and a changed .incbin file; a bzImage that is
# another kernel's, refused.  (make vm's refusals: test-inputs.sh.)
#
# usage: test-vm-kernels.sh

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"
test_options "$@"

out=$TOP/build/check/vm-kernels
rm -rf "$out"
mkdir -p "$out"

# vm NAME ARGS...: make vm ARGS, its output in $out/NAME.log, its status in $rc.
vm()
{
	run_to "$out/$1.log" make -s -C "$TOP" vm "${@:2}"
}

# ccache-cc in depend mode, as build-kernel.sh runs it: an object whose
# .incbin file changed, at the same size, holds the new bytes.
if command -v ccache >/dev/null; then
	mkdir -p "$out/incbin"
	printf '\t.section .rodata\n\t.incbin\t"payload"\n' >"$out/incbin/piggy.S"
	objects=''
	for payload in old-kernel new-kernel; do
		echo "$payload" >"$out/incbin/payload"
		(cd "$out/incbin" && CCACHE_DIR=$out/incbin/store CCACHE_DEPEND=true \
			"$TOOLS/kernel/ccache-cc" -MMD -c -o piggy.o piggy.S) \
			>>"$out/incbin.log" 2>&1
		objects+=$(objcopy -O binary -j .rodata "$out/incbin/piggy.o" /dev/stdout \
			2>/dev/null)
	done
	verify "ccache-cc: a changed .incbin file, its size the same, gives a new object" \
		test "$objects" = old-kernelnew-kernel
else
	skip "ccache-cc: ccache is not installed"
fi

stock=$("$TOOLS/kernel/fetch-kernel.sh" | tail -n 1)
krel=$(cat "$stock/krel")
headers=$stock/usr/src/linux-headers-$krel
[ -f "$headers/Makefile" ] || die "no headers at $headers"
src61=$("$TOOLS/kernel/fetch-source.sh" --series 6.1 | tail -n 1)

cat >"$out/marker.patch" <<'PATCH'
--- a/kernel/async.c
+++ b/kernel/async.c
@@ -345,2 +345,9 @@ bool current_is_async(void)
 }
 EXPORT_SYMBOL_GPL(current_is_async);
+
+static int __init async_candidate_marker(void)
+{
+	pr_info("module_async: candidate patch applied\n");
+	return 0;
+}
+core_initcall(async_candidate_marker);
PATCH
patched=$TOP/build/vm/vanilla+patches/results.ktap

# Two patches differing in a constant (the request from async returns -EDEADLK,
# -ENOMEM): their images had one size, and ccache gave the second the first one's
# piggy.o.  Each must boot its own: the suite prints what the request returned.
for errno in EDEADLK=35 ENOMEM=12; do
	name=${errno%=*}
	warn='^\tWARN_ON_ONCE(wait && current_is_async());$'
	ret='\tif (WARN_ON_ONCE(wait \&\& current_is_async()))\n\t\treturn -'$name';'
	sed "s/$warn/$ret/" "$src61/kernel/kmod.c" >"$out/kmod.c"
	rc=0
	diff -u --label a/kernel/kmod.c --label b/kernel/kmod.c "$src61/kernel/kmod.c" \
		"$out/kmod.c" >"$out/$name.patch" || rc=$?
	[ "$rc" -eq 1 ] || die "no WARN_ON_ONCE to change in $src61/kernel/kmod.c"
	vm "$name" PATCH="$out/$name.patch" \
		SUITE_ARGS="--case request_module_from_async_async_probe"
	got=$("$KTAP" diag request_module_from_async_async_probe "$patched" 2>/dev/null |
		sed -n 's/.*async job returned \(-*[0-9]*\) .*/\1/p' | sed -n 1p) || true
	verify "PATCH= returning -$name: the guest's request returned '$got' (exit $rc)" \
		test "$got" = "-${errno#*=}"
done

# PATCH= alone, two patches: vanilla with both, the marker's line at boot.
# A kernel that waits for no async work is never-sync: the requests from
# async run and pass; the nested load returns, its own async job undone.
vm never-sync PATCH="$out/marker.patch $(echo "$TOOLS"/kernel/patches/never-sync/6.1/*.patch)"
verify "PATCH= alone boots vanilla with the patches (exit $rc)" \
	grep -q 'module_async: candidate patch applied' "${patched%/*}/console.log"
got=$("$KTAP" policy "$patched" 2>/dev/null) || true
verify "never-sync fixture: policy '$got', never-sync (exit $rc)" test "$got" = never-sync
for want in async_init_completes=not-ok request_module_from_async_kyber-iosched=ok \
	    nested_async_load=not-ok; do
	got=$("$KTAP" verdict "${want%%=*}" "$patched" 2>/dev/null) || true
	verify "never-sync fixture: ${want%%=*} '$got', ${want#*=}" test "$got" = "${want#*=}"
done

# KSRC=: a git work tree of one commit for one content (the same HEAD, the
# same build, reused by the next run); -f: Debian's .gitignore is "/*".
ksrc=$out/linux
cp -al "$src61" "$ksrc"
git -C "$ksrc" init -q
git -C "$ksrc" add -A -f
GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z \
	git -C "$ksrc" -c user.name=module_async -c user.email=module_async@localhost \
	commit -q -m linux-source-6.1
touch "$out/ksrc.before"
vm ksrc KSRC="$ksrc"
verify "KSRC=: built as the tree's HEAD and changes (exit $rc)" \
	grep -qF "git $(git -C "$ksrc" rev-parse HEAD) diff" "$out/ksrc.log"
# vanilla's compiles are in ccache: this run built it above.
built=$(sed -n 's/.*built in [0-9]* s, \([0-9]*\) of \([0-9]*\) compiles from ccache.*/\1 \2/p' \
	"$out/ksrc.log")
if [ -z "$built" ]; then
	skip "KSRC=: compiles from ccache (none this run: no ccache, or the entry cached)"
else
	verify "KSRC=: ${built% *} of ${built#* } compiles from ccache, 90% or more" \
		test "${built% *}" -ge $((${built#* } * 9 / 10))
fi
# make's status is the script's.
expect_verdicts "KSRC=: the verdicts expected of vanilla" vanilla \
	"$TOP/build/vm/ksrc-linux/results.ktap" "$rc" "$out/ksrc.compare.log"
changed=$(git -C "$ksrc" status --porcelain --untracked-files=all --ignored | head -n 5)
newer=$(find "$ksrc" -path "$ksrc/.git" -prune -o -newer "$out/ksrc.before" -print | head -n 5)
echo "$changed" "$newer" >"$tmp/err"
check "KSRC=: the tree is as it was (git status, no file newer than the run)" \
	test -z "$changed$newer"

# The KSRC= tree's build again, its entry removed and its bzImage replaced
# by the stock vmlinuz, newer than its inputs, so that make keeps it.
# ksrc_build: build-kernel.sh of the KSRC= tree, its status in $rc.
ksrc_build()
{
	rc=0
	"$TOOLS/kernel/build-kernel.sh" --variant vanilla --ksrc "$ksrc" \
		>"$out/rebuild.out" 2>"$out/rebuild.log" || rc=$?
}
# built_ok RC ENTRY: RC 0, ENTRY's vmlinuz holds kdir/vmlinux, build-id names it.
built_ok()
{
	local id

	[ "$1" -eq 0 ] &&
		id=$(kernel_image_check "$2/vmlinuz" "$2/kdir/vmlinux" \
			"$2/kdir/source/scripts/extract-vmlinux" 2>/dev/null) &&
		[ "$(cat "$2/build-id" 2>/dev/null)" = "$id" ]
}
ksrc_build
entry=$(tail -n 1 "$out/rebuild.out")
verify "a build's entry records the build ID its image holds (build-id; exit $rc)" \
	built_ok "$rc" "$entry"
bzimage=$(cat "$entry/tree" 2>/dev/null)/obj/arch/x86/boot/bzImage
if [ "$rc" -ne 0 ] || [ ! -d "$entry" ] || [ ! -f "$bzimage" ]; then
	fail "an image that is another kernel: not tried, the build before it failed" \
		"or its entry names no build tree with a bzImage"
else
	cp "$stock/vmlinuz" "$bzimage"
	touch "$bzimage"
	chmod -R u+w "$entry"
	rm -rf "$entry"
	ksrc_build
	what=$(grep -m1 -o 'holds the kernel of build ID [0-9a-f]*' "$out/rebuild.log") || true
	verify "an image that is another kernel is refused, exit $rc, no entry: $what" \
		test "$rc" -eq 3 -a ! -e "$entry" -a -n "$what"
	ksrc_build
	verify "the build after it makes the boot wrapper again, its image its vmlinux" \
		built_ok "$rc" "$entry"
fi

vm headers KERNEL="$stock/vmlinuz" KDIR="$headers"
verify "KERNEL=FILE KDIR=<headers>: modules from beside the headers, exit $rc" \
	grep -qF "modules of $krel from $stock/lib/modules/$krel" "$out/headers.log"
expect_verdicts "KERNEL=FILE KDIR=<headers>: the verdicts expected of stock" stock \
	"$TOP/build/vm/custom/results.ktap" "$rc" "$out/headers.compare.log"

checks_summary
