#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-vm-kernels.sh - the ways `make vm` is told which kernel to boot:
# PATCH= alone (vanilla plus the patch, which prints a line at boot), and
# PATCH= of the never-sync fixture (do_init_module() without its sync: the
# policy never-sync, the cases the facts call safe run); KERNEL=FILE
# KDIR=<Debian's headers> (the stock kernel as a user's own); KSRC= (a
# maintainer's own tree, here a hard-linked copy of linux-source-6.1 made a
# git work tree, built keyed by its content, its compiles vanilla's from
# ccache, the tree left as it was); the refusals before anything is
# fetched or built (exit 2).  And the kernel booted is the kernel built:
# ccache-cc compiles a changed .incbin file anew; two PATCH= kernels of one
# size boot their own; in a scratch cache, a bzImage that is another
# kernel's is refused (exit 3, no entry) and the next build makes the boot
# wrapper again.  Ends with "N passed, N failed".

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

case ${1:-} in
'') ;;
-h|--help) echo "Usage: $PROG [--help]"; exit 0 ;;
*) usage_error "unknown argument '$1'" ;;
esac

out=$TOP/build/check/vm-kernels
rm -rf "$out"
mkdir -p "$out"

# vm NAME ARGS...: make vm ARGS, its output in $out/NAME.out and .log;
# prints its exit status.
vm()
{
	local rc=0

	make -s -C "$TOP" vm "${@:2}" >"$out/$1.out" 2>"$out/$1.log" || rc=$?
	echo "$rc"
}

# refused WHAT ARGS...: make vm ARGS exits 2 at once, naming why.
refused()
{
	local rc

	rc=$(vm refused "${@:2}")
	if [ "$rc" -ne 0 ] && grep -q 'Error 2' "$out/refused.log" &&
	   ! grep -q 'downloading\|booting\|building' "$out/refused.log"; then
		pass "refused at once: $1 ($(grep -m1 'vm.sh:' "$out/refused.log"))"
	else
		fail "not refused at once: $1 (exit $rc, log $out/refused.log)"
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

patched=$TOP/build/vm/vanilla+patches/results.ktap
rc=$(vm patch PATCH="$out/marker.patch")
verify "PATCH= alone boots vanilla with the patch (exit $rc)" \
	grep -q 'module_async: candidate patch applied' "$TOP/build/vm/vanilla+patches/console.log"
verdicts_of "$patched" vanilla "PATCH=" "$rc"

# Two candidate patches, made from the source itself, that differ only in a
# constant of one size: the request from async returns -EDEADLK, then
# -ENOMEM.  On 6.1.192-3 their compressed images had the same size, and
# ccache gave the second the first one's boot wrapper (piggy.o): it booted
# the first kernel.  Each must boot its own: the suite prints what the
# request returned.
piggy=$(cache_dir)/build/tree/$src61_kver-vanilla/obj/arch/x86/boot/compressed/piggy.S
sizes=()
for errno in EDEADLK=35 ENOMEM=12; do
	name=${errno%=*}
	warn='^\tWARN_ON_ONCE(wait && current_is_async());$'
	ret='\tif (WARN_ON_ONCE(wait \&\& current_is_async()))\n\t\treturn -'$name';'
	sed "s/$warn/$ret/" "$src61/kernel/kmod.c" >"$out/kmod.c"
	rc=0
	diff -u --label a/kernel/kmod.c --label b/kernel/kmod.c "$src61/kernel/kmod.c" \
		"$out/kmod.c" >"$out/$name.patch" || rc=$?
	[ "$rc" -eq 1 ] || die "no WARN_ON_ONCE to change in $src61/kernel/kmod.c"
	rc=$(vm "$name" PATCH="$out/$name.patch" \
		SUITE_ARGS="--case request_module_from_async_async_probe")
	sizes+=("$(sed -n 's/^z_input_len = //p' "$piggy" 2>/dev/null)")
	got=$("$TOOLS/ktap/ktap" diag request_module_from_async_async_probe "$patched" \
		2>/dev/null | sed -n 's/.*async job returned \(-*[0-9]*\) .*/\1/p' | sed -n 1p) ||
		true
	verify "PATCH= returning -$name: the guest's request returned '$got' (exit $rc)" \
		test "$got" = "-${errno#*=}"
done
log "compressed payloads of the two: ${sizes[*]} bytes (the same size is what ccache got wrong)"

# A kernel that waits for no async work is never-sync, and what runs
# follows from the facts: the requests from async run, and pass; the
# nested load returns with its own async job undone, and fails.
rc=$(vm never-sync PATCH="$(echo "$TOOLS"/kernel/patches/never-sync/6.1/*.patch)")
got=$("$TOOLS/ktap/ktap" policy "$patched" 2>/dev/null) || true
verify "never-sync fixture: policy '$got', never-sync (exit $rc)" test "$got" = never-sync
for want in async_init_completes=not-ok request_module_from_async_kyber-iosched=ok \
	    nested_async_load=not-ok; do
	got=$("$TOOLS/ktap/ktap" verdict "${want%%=*}" "$patched" 2>/dev/null) || true
	verify "never-sync fixture: ${want%%=*} '$got', ${want#*=}" test "$got" = "${want#*=}"
done

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
# built_ok RC ENTRY: the build exited 0, ENTRY's vmlinuz holds its kdir's
# vmlinux, and its build-id names it.
built_ok()
{
	local id

	[ "$1" -eq 0 ] &&
		id=$(kernel_image_check "$2/vmlinuz" "$2/kdir/vmlinux" \
			"$2/kdir/source/scripts/extract-vmlinux" 2>/dev/null) &&
		[ "$(cat "$2/build-id" 2>/dev/null)" = "$id" ]
}
rc=$(scratch_build)
entry=$(tail -n 1 "$out/scratch.out")
verify "a build's entry records the build ID its image holds (build-id; exit $rc)" \
	built_ok "$rc" "$entry"
bzimage=$scratch/build/tree/$src61_kver-vanilla/obj/arch/x86/boot/bzImage
if [ "$rc" -ne 0 ] || [ ! -d "$entry" ] || [ ! -f "$bzimage" ]; then
	fail "an image that is another kernel: not tried, the build before it failed"
else
	cp "$stock/vmlinuz" "$bzimage"
	touch "$bzimage"
	chmod -R u+w "$entry"
	rm -rf "$entry"
	rc=$(scratch_build)
	what=$(grep -m1 -o 'holds the kernel of build ID [0-9a-f]*' "$out/scratch.log") || true
	verify "an image that is another kernel is refused, exit $rc, no entry: $what" \
		test "$rc" -eq 3 -a ! -e "$entry" -a -n "$what"
	rc=$(scratch_build)
	verify "the build after it makes the boot wrapper again, its image its vmlinux" \
		built_ok "$rc" "$entry"
fi

touch "$out/ksrc.before"
rc=$(vm ksrc KSRC="$ksrc")
verify "KSRC=: built as the tree's HEAD and changes (exit $rc)" \
	grep -qF "git $(git -C "$ksrc" rev-parse HEAD) diff" "$out/ksrc.log"
# A copy of the source vanilla is built from: its compiles are vanilla's,
# from ccache (build-kernel.sh), where this run built it at all.
built=$(sed -n 's/.*built in [0-9]* s, \([0-9]*\) of \([0-9]*\) compiles from ccache.*/\1 \2/p' \
	"$out/ksrc.log")
if [ -z "$built" ] && grep -q 'built in [0-9]* s$' "$out/ksrc.log"; then
	skip "KSRC=: compiles from ccache (built without ccache: not installed)"
elif [ -z "$built" ]; then
	skip "KSRC=: compiles from ccache (no compile this run: its entry was cached)"
else
	verify "KSRC=: ${built% *} of ${built#* } compiles from ccache, 90% or more" \
		test "${built% *}" -ge $((${built#* } * 9 / 10))
fi
verdicts_of "$TOP/build/vm/ksrc-linux/results.ktap" vanilla "KSRC=" "$rc"
changed=$(git -C "$ksrc" status --porcelain --untracked-files=all --ignored | head -n 5)
newer=$(find "$ksrc" -path "$ksrc/.git" -prune -o -newer "$out/ksrc.before" -print | head -n 5)
if [ -z "$changed$newer" ]; then
	pass "KSRC=: the tree is as it was (git status, no file newer than the run)"
else
	fail "KSRC=: the tree was written: $(echo "$changed" "$newer" | tr '\n' ' ')"
fi

rc=$(vm headers KERNEL="$stock/vmlinuz" KDIR="$headers")
verify "KERNEL=FILE KDIR=<headers>: modules from beside the headers, exit $rc" \
	grep -qF "modules of $krel from $stock/lib/modules/$krel" "$out/headers.log"
verdicts_of "$TOP/build/vm/custom/results.ktap" stock "KERNEL=FILE KDIR=<headers>" "$rc"

checks_summary
