#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-vm-kernels.sh - the ways `make vm` is told which kernel to boot.
#
#   - PATCH= alone: vanilla plus the patch, built and booted (the patch
#     prints a line at boot, which the console must show), the vanilla
#     kernel's verdicts;
#   - PATCH= of the never-sync fixture (do_init_module() without its
#     sync): the policy named never-sync, and the cases the facts call
#     safe run (the stock kernel's always-sync is checked with its column);
#   - KERNEL=FILE KDIR=<Debian's headers>: the stock kernel as a user's
#     own, its modules taken from beside the headers, the stock verdicts;
#   - KSRC=: a maintainer's own tree, here a hard-linked copy of
#     linux-source-6.1 made a git work tree (git add of its 75k files: about
#     a minute), built out of tree in an O= of the cache keyed by its
#     content (2-4 min the first time, reused after), its compiles
#     vanilla's from ccache, the vanilla kernel's verdicts, and the tree
#     left as it was (git status, no file newer than the run);
#   - refusals before anything is fetched or built (exit 2): a patch on the
#     stock binary, headers with no module tree beside them, MODDIR= that is
#     no module tree, KSRC= that is no kernel tree or with KERNEL=stock;
#   - the kernel booted is the kernel built: build-kernel.sh's compiler
#     (tools/kernel/ccache-cc) compiles a changed .incbin file anew; two
#     PATCH= kernels that differ in a constant of one size each boot their
#     own (the request from async returns -EDEADLK, then -ENOMEM); in a
#     scratch cache, a tree whose bzImage is another kernel's is refused
#     (exit 3, no entry) and the next build makes the boot wrapper again.
# Ends with "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

usage()
{
	echo "Usage: $PROG [--help]"
	echo "Boots the suite by make vm with PATCH=, KERNEL=FILE KDIR= and MODDIR=."
}
case ${1:-} in
'') ;;
-h|--help) usage; exit 0 ;;
*) usage_error "unknown argument '$1'" ;;
esac

out=$TOP/build/check/vm-kernels
rm -rf "$out"
mkdir -p "$out"

# refused WHAT STATUS-LOG ARGS...: make vm ARGS exits 2 at once, naming why.
refused()
{
	local what=$1 rc=0

	shift
	make -s -C "$TOP" vm "$@" >"$out/refused.out" 2>"$out/refused.log" || rc=$?
	if [ "$rc" -ne 0 ] && grep -q 'Error 2' "$out/refused.log" &&
	   ! grep -q 'downloading\|booting\|building' "$out/refused.log"; then
		pass "refused at once: $what ($(grep -m1 'vm.sh:' "$out/refused.log"))"
	else
		fail "not refused at once: $what (exit $rc, log $out/refused.log)"
	fi
}

# verdicts_of KTAP KERNEL WHAT RC: the document holds the verdicts expected
# of KERNEL and the run exited as expected (make's 0 is the script's 0).
verdicts_of()
{
	if "$TOOLS/expected/expected" compare --status "$4" "$2" "$1" >"$out/compare.log" 2>&1
	then
		pass "$3: the verdicts expected of $2"
	else
		fail "$3: not the verdicts expected of $2 (see $out/compare.log)"
	fi
}

# ---- ccache-cc --------------------------------------------------------------

# The compiler build-kernel.sh gives kbuild, in depend mode as it runs it: an
# object whose .incbin file changed, at the same size, holds the new bytes.
# (ccache gcc itself gives the old object: it keys on the source's text and
# the headers of the dependency file, and .incbin's file is in neither.)
if command -v ccache >/dev/null; then
	mkdir -p "$out/incbin"
	printf '\t.section .rodata\n\t.incbin\t"payload"\n' >"$out/incbin/piggy.S"
	objects=''
	for payload in old-kernel new-kernel; do
		echo "$payload" >"$out/incbin/payload"
		(cd "$out/incbin" && CCACHE_DIR=$out/incbin/store CCACHE_DEPEND=true \
			"$TOOLS/kernel/ccache-cc" -MMD -c -o piggy.o piggy.S) \
			>>"$out/incbin.log" 2>&1
		objects+=$(objcopy -O binary -j .rodata "$out/incbin/piggy.o" \
			/dev/stdout 2>/dev/null)
	done
	if [ "$objects" = old-kernelnew-kernel ]; then
		pass "ccache-cc: a changed .incbin file, its size the same, gives a new object"
	else
		fail "ccache-cc: objects of an .incbin file changed between them: '$objects'"
	fi
else
	skip "ccache-cc: ccache is not installed"
fi

# ---- refusals ---------------------------------------------------------------

stock=$("$TOOLS/kernel/fetch-kernel.sh" | tail -n 1)
krel=$(cat "$stock/krel")
headers=$stock/usr/src/linux-headers-$krel
[ -f "$headers/Makefile" ] || die "no headers at $headers"

cat >"$out/marker.patch" <<'EOF'
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
EOF

refused "PATCH= on the stock kernel" KERNEL=stock PATCH="$out/marker.patch"
# Headers whose root has no lib/modules/<release>/.
mkdir -p "$out/bare/usr/src"
ln -s "$headers" "$out/bare/usr/src/linux-headers-$krel"
refused "headers without a module tree" KERNEL="$stock/vmlinuz" \
	KDIR="$out/bare/usr/src/linux-headers-$krel"
refused "MODDIR= that is no module tree" KERNEL="$stock/vmlinuz" KDIR="$headers" \
	MODDIR="$out"

src61=$("$TOOLS/kernel/fetch-source.sh" --series 6.1 | tail -n 1)
src61_kver=${src61%/linux-source-*}
src61_kver=${src61_kver##*/}
ksrc=$out/linux
cp -al "$src61" "$ksrc"
git -C "$ksrc" init -q
# -f: Debian's top-level .gitignore ignores everything ("/*").
git -C "$ksrc" add -A -f
# One commit for one content, whoever makes it when: the same HEAD, the
# same build, reused by the next run.
export GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z
git -C "$ksrc" -c user.name=module_async -c user.email=module_async@localhost \
	commit -q -m linux-source-6.1
refused "KSRC= that is no kernel tree" KSRC="$out"
refused "KSRC= with KERNEL=stock" KSRC="$ksrc" KERNEL=stock

# ---- boots ------------------------------------------------------------------

rc=0
make -s -C "$TOP" vm PATCH="$out/marker.patch" >"$out/patch.out" 2>"$out/patch.log" || rc=$?
console=$TOP/build/vm/vanilla+patches/console.log
if grep -q 'module_async: candidate patch applied' "$console" 2>/dev/null; then
	pass "PATCH= alone boots vanilla with the patch (exit $rc)"
else
	fail "PATCH= alone: no sign of the patch in $console (exit $rc, log $out/patch.log)"
fi
verdicts_of "$TOP/build/vm/vanilla+patches/results.ktap" vanilla "PATCH=" "$rc"

# Two candidate patches that differ only in a constant of one size: the
# request from async returns -EDEADLK, then -ENOMEM.  On 6.1.192-3 their
# compressed images had the same size, and ccache gave the second the first
# one's boot wrapper (piggy.o, keyed on the payload's sizes alone): it
# booted the first kernel.  Each must boot its own: the suite prints what
# the request returned.
piggy=$(cache_dir)/build/tree/${src61_kver}-vanilla/obj/arch/x86/boot/compressed/piggy.S
sizes=()
for errno in EDEADLK=35 ENOMEM=12; do
	# The candidate, made from the source itself: its WARN_ON_ONCE returns.
	warn='^\tWARN_ON_ONCE(wait && current_is_async());$'
	ret='\tif (WARN_ON_ONCE(wait \&\& current_is_async()))\n\t\treturn -'${errno%=*}';'
	sed "s/$warn/$ret/" "$src61/kernel/kmod.c" >"$out/kmod.c"
	rc=0
	diff -u --label a/kernel/kmod.c --label b/kernel/kmod.c "$src61/kernel/kmod.c" \
		"$out/kmod.c" >"$out/${errno%=*}.patch" || rc=$?
	[ "$rc" -eq 1 ] || die "no WARN_ON_ONCE to change in $src61/kernel/kmod.c"
	rc=0
	make -s -C "$TOP" vm PATCH="$out/${errno%=*}.patch" \
		SUITE_ARGS="--case request_module_from_async_async_probe" \
		>"$out/${errno%=*}.out" 2>"$out/${errno%=*}.log" || rc=$?
	sizes+=("$(sed -n 's/^z_input_len = //p' "$piggy" 2>/dev/null)")
	got=$("$TOOLS/ktap/ktap" diag request_module_from_async_async_probe \
		"$TOP/build/vm/vanilla+patches/results.ktap" 2>/dev/null |
		sed -n 's/.*async job returned \(-*[0-9]*\) .*/\1/p' | sed -n 1p) || true
	if [ "$got" = "-${errno#*=}" ]; then
		pass "PATCH= returning -${errno%=*}: the guest's request returned $got (exit $rc)"
	else
		fail "PATCH= returning -${errno%=*}: the guest's request returned '$got'," \
			"not -${errno#*=} (exit $rc, log $out/${errno%=*}.log)"
	fi
done
log "compressed payloads of the two: ${sizes[*]} bytes" \
	"(the same size is what ccache got wrong)"

# A kernel that waits for no async work is never-sync, and what runs
# follows from the facts: the requests from async run, and pass; the
# nested load returns with its own async job undone, and fails.
never_sync=$TOOLS/kernel/patches/never-sync/6.1
rc=0
make -s -C "$TOP" vm PATCH="$(echo "$never_sync"/*.patch)" \
	>"$out/never-sync.out" 2>"$out/never-sync.log" || rc=$?
doc=$TOP/build/vm/vanilla+patches/results.ktap
got=$("$TOOLS/ktap/ktap" policy "$doc" 2>/dev/null) || true
if [ "$got" = never-sync ]; then
	pass "never-sync fixture: policy never-sync (exit $rc)"
else
	fail "never-sync fixture: policy '$got', not never-sync (log $out/never-sync.log)"
fi
for want in async_init_completes=not-ok request_module_from_async_kyber-iosched=ok \
	    nested_async_load=not-ok; do
	got=$("$TOOLS/ktap/ktap" verdict "${want%%=*}" "$doc" 2>/dev/null) || true
	if [ "$got" = "${want#*=}" ]; then
		pass "never-sync fixture: ${want%%=*} $got"
	else
		fail "never-sync fixture: ${want%%=*} '$got', not ${want#*=}"
	fi
done

# ---- the image holds the vmlinux just linked -------------------------------

# In a scratch cache (its ccache the real one's store, its source the real
# one's): vanilla built, then its tree's bzImage replaced by another kernel's
# (the stock vmlinuz), newer than what make makes it from, so that make
# keeps it.  The next build must refuse it (exit 3, no entry) and the one
# after make the boot wrapper again.
scratch=$out/cache
mkdir -p "$scratch"
[ ! -d "$(cache_dir)/ccache" ] || ln -s "$(cache_dir)/ccache" "$scratch/ccache"
scratch_build()
{
	local rc=0

	MODULE_ASYNC_CACHE=$scratch "$TOOLS/kernel/build-kernel.sh" --variant vanilla \
		--source "$src61" >"$out/scratch.out" 2>"$out/scratch.log" || rc=$?
	echo "$rc"
}
# image_is_vmlinux ENTRY: its vmlinuz holds its kdir's vmlinux, and its
# build-id names it.
image_is_vmlinux()
{
	local id

	id=$(kernel_image_check "$1/vmlinuz" "$1/kdir/vmlinux" \
		"$1/kdir/source/scripts/extract-vmlinux" 2>/dev/null) &&
		[ "$(cat "$1/build-id" 2>/dev/null)" = "$id" ]
}
rc=$(scratch_build)
entry=$(tail -n 1 "$out/scratch.out")
if [ "$rc" -eq 0 ] && image_is_vmlinux "$entry"; then
	pass "a build's entry records the build ID its image holds (build-id)"
else
	fail "a build: exit $rc, no build-id its image holds (log $out/scratch.log)"
fi
bzimage=$scratch/build/tree/$src61_kver-vanilla/obj/arch/x86/boot/bzImage
if [ "$rc" -ne 0 ] || [ ! -d "$entry" ] || [ ! -f "$bzimage" ]; then
	fail "an image that is another kernel: not tried, the build before it failed"
else
	cp "$stock/vmlinuz" "$bzimage"
	touch "$bzimage"
	chmod -R u+w "$entry"
	rm -rf "$entry"
	rc=$(scratch_build)
	if [ "$rc" -eq 3 ] && [ ! -e "$entry" ] &&
	   grep -q 'does not hold the vmlinux just linked' "$out/scratch.log"; then
		pass "an image that is another kernel is refused, exit 3:" \
			"$(grep -m1 -o 'holds the kernel of build ID [0-9a-f]*' "$out/scratch.log")"
	else
		fail "an image that is another kernel: exit $rc, entry" \
			"$([ -e "$entry" ] && echo made || echo 'not made') (log $out/scratch.log)"
	fi
	rc=$(scratch_build)
	if [ "$rc" -eq 0 ] && image_is_vmlinux "$entry"; then
		pass "the build after it makes the boot wrapper again, its image its vmlinux"
	else
		fail "the build after the refusal: exit $rc (log $out/scratch.log)"
	fi
fi

touch "$out/ksrc.before"
rc=0
make -s -C "$TOP" vm KSRC="$ksrc" >"$out/ksrc.out" 2>"$out/ksrc.log" || rc=$?
if grep -qF "git $(git -C "$ksrc" rev-parse HEAD) diff" "$out/ksrc.log"; then
	pass "KSRC=: built as the tree's HEAD and changes (exit $rc)"
else
	fail "KSRC=: no build keyed by the tree's HEAD (exit $rc, log $out/ksrc.log)"
fi
# A copy of the source vanilla is built from: its compiles are vanilla's,
# from ccache (build-kernel.sh), where this run built it at all.
built=$(sed -n 's/.*built in [0-9]* s, \([0-9]*\) of \([0-9]*\) compiles from ccache.*/\1 \2/p' \
	"$out/ksrc.log")
if [ -z "$built" ] && grep -q 'built in [0-9]* s$' "$out/ksrc.log"; then
	skip "KSRC=: compiles from ccache (built without ccache: not installed)"
elif [ -z "$built" ]; then
	skip "KSRC=: compiles from ccache (no compile this run: its entry was cached)"
elif [ "${built% *}" -ge $((${built#* } * 9 / 10)) ]; then
	pass "KSRC=: ${built% *} of ${built#* } compiles from ccache"
else
	fail "KSRC=: only ${built% *} of ${built#* } compiles from ccache, not vanilla's"
fi
verdicts_of "$TOP/build/vm/ksrc-linux/results.ktap" vanilla "KSRC=" "$rc"
changed=$(git -C "$ksrc" status --porcelain --untracked-files=all --ignored | head -n 5)
newer=$(find "$ksrc" -path "$ksrc/.git" -prune -o -newer "$out/ksrc.before" -print |
	head -n 5)
if [ -z "$changed$newer" ]; then
	pass "KSRC=: the tree is as it was (git status, no file newer than the run)"
else
	fail "KSRC=: the tree was written: $(echo "$changed" "$newer" | tr '\n' ' ')"
fi

rc=0
make -s -C "$TOP" vm KERNEL="$stock/vmlinuz" KDIR="$headers" \
	>"$out/headers.out" 2>"$out/headers.log" || rc=$?
beside="modules of $krel from $stock/lib/modules/$krel"
if [ "$rc" -eq 0 ] && grep -qF "$beside" "$out/headers.log"; then
	pass "KERNEL=FILE KDIR=<headers>: modules from beside the headers, exit 0"
else
	fail "KERNEL=FILE KDIR=<headers>: exit $rc (log $out/headers.log)"
fi
verdicts_of "$TOP/build/vm/custom/results.ktap" stock \
	"KERNEL=FILE KDIR=<headers>" "$rc"

checks_summary
