#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-fresh.sh - README.md's first commands in a minimal Debian root
# (debootstrap minbase, cached as a checksummed tarball, this machine's apt
# sources) under chroot: as another user `make vm` names the apt-get command
# to run; as root the prerequisites, a clone of HEAD and `make vm` with an
# empty cache give the stock kernel's expected verdicts; then .ci/run, with
# only the packages it installs, passes make check's host stages there.
#
# usage: test-fresh.sh

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"
test_options "$@"

readonly MAKE_VM_BOUND=1800	# every package installed, the kernel fetched
readonly CI_BOUND=1200		# .ci/run's packages, the host stages
readonly CI_STAGES="shell lib compare driver"
readonly SUITE=bookworm VARIANT=minbase ARCH=amd64

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount)"
need_cmd debootstrap chroot mount umount findmnt git tar sha256sum
rev=$(git -C "$TOP" rev-parse --verify "HEAD^{commit}")
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
	grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n 1 | tr -d ' ') || true
[ -n "$mirror" ] || die "no Debian mirror in this machine's apt sources"

# What a bare machine needs first: README.md's first indented apt-get line.
prereq=$(sed -n 's/^    \(apt-get .*\)$/\1/p' "$TOP/README.md" | head -n 1)
prereq=${prereq%%#*}

# base_tarball: a verified tarball of a fresh root, keyed by debootstrap's input.
base_tarball()
{
	local key entry

	key="$SUITE $VARIANT $ARCH $mirror debootstrap $(dpkg-query -W -f='${Version}' debootstrap)"
	entry=$(cache_dir)/fresh-root/$(printf '%s' "$key" | sha256sum | cut -c1-16)
	entry_lock "$entry"
	if ! entry_valid "$entry" "$key" ||
	   ! (cd "$entry" && sha256sum --status -c base.tar.gz.sha256); then
		[ ! -e "$entry" ] || log "$entry is incomplete or does not verify: making it again"
		entry_remove "$entry"
		entry_tmp "$entry"
		log "debootstrap --variant=$VARIANT $SUITE from $mirror"
		debootstrap --variant="$VARIANT" --arch="$ARCH" "$SUITE" "$ENTRY_TMP/root" \
			"$mirror" >"$ENTRY_TMP/debootstrap.log" 2>&1 ||
			die "debootstrap failed: $(tail -n 3 "$ENTRY_TMP/debootstrap.log")"
		tar --numeric-owner -C "$ENTRY_TMP/root" -czf "$ENTRY_TMP/base.tar.gz" .
		rm -rf --one-file-system "$ENTRY_TMP/root"
		(cd "$ENTRY_TMP" && sha256sum base.tar.gz) >"$ENTRY_TMP/base.tar.gz.sha256"
		entry_commit "$entry" "$key"
	fi
	printf '%s\n' "$entry/base.tar.gz"
}

root=$TOP/build/fresh/root
log=$TOP/build/fresh

# remove_root: the root unmounted, deepest first (else lazily), and removed.
remove_root()
{
	local m

	[ -e "$root" ] || return 0
	for m in $(findmnt -rn -o TARGET | grep -E "^$root(/|$)" | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" || return 1
	done
	! findmnt -rn -o TARGET | grep -qE "^$root(/|$)" ||
		{ log "$root is still mounted: not removing it"; return 1; }
	rm -rf --one-file-system "$root"
}

in_root()
{
	chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "$1"
}

tarball=$(base_tarball)
mkdir -p "$log"
remove_root || die "cannot clear $root"
trap 'remove_root || true; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$root"
tar --numeric-owner -C "$root" -xpzf "$tarball"

# This machine's apt sources and settings, not debootstrap's sources.list.
rm -f "$root/etc/apt/sources.list"
cp -a /etc/apt/sources.list.d/. "$root/etc/apt/sources.list.d/"
[ ! -e /etc/apt/sources.list ] || cp /etc/apt/sources.list "$root/etc/apt/"
cp -a /etc/apt/apt.conf.d/. "$root/etc/apt/apt.conf.d/"
cp /etc/resolv.conf "$root/etc/resolv.conf"

mount --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"
mount -t proc none "$root/proc"
mount --rbind /sys "$root/sys"
mount --make-rslave "$root/sys"

git clone -q --bare "$TOP" "$root/srv/module_async.git"

run_to "$log/prereq.log" in_root "$prereq"
details=$log/prereq.log check "README.md's prerequisites: ${prereq:-none found}" \
	test -n "$prereq" -a "$rc" -eq 0
run_to "$log/clone.log" in_root "git clone -q /srv/module_async.git /root/module_async &&
	git -C /root/module_async checkout -q $rev"
details=$log/clone.log check "a clone of $rev by the root's own git" test "$rc" -eq 0

# As another user, before the packages: a failure naming apt-get, nothing fetched.
in_root "git clone -q /srv/module_async.git /tmp/user-clone &&
	 chown -R nobody:nogroup /tmp/user-clone" >"$log/user-clone.log" 2>&1 || true
run_to "$log/user-make-vm.log" chroot --userspec=nobody:nogroup "$root" /usr/bin/env -i \
	HOME=/tmp/user-home PATH=/usr/sbin:/usr/bin:/sbin:/bin make -C /tmp/user-clone vm
told()
{
	[ "$rc" -ne 0 ] && [ ! -e "$root/tmp/user-home/.cache" ] &&
		grep -q '^  apt-get update && apt-get install -y ' "$log/user-make-vm.log"
}
details=$log/user-make-vm.log check \
	"make vm as another user: exit $rc, the apt-get command to run, nothing fetched" told

start=$(date +%s)
run_to "$log/make-vm.log" in_root "timeout $MAKE_VM_BOUND make -C /root/module_async vm"
log "make vm in the fresh root: exit $rc after $(($(date +%s) - start))s"
details=$log/make-vm.log check "make vm in a fresh root exits 0" test "$rc" -eq 0

rm -f "$log/results.ktap"
cp "$root/root/module_async/build/vm/stock/results.ktap" "$log/" || true
expect_verdicts "make vm in a fresh root: the verdicts expected of stock" stock \
	"$log/results.ktap" "$rc" "$log/compare.log"

run_to "$log/ci.log" in_root "cd /root/module_async &&
	timeout $CI_BOUND bash .ci/run STAGES='$CI_STAGES'"
details=$log/ci.log check \
	".ci/run STAGES='$CI_STAGES' with only the packages it installs: exit $rc" \
	test "$rc" -eq 0
checks_summary
