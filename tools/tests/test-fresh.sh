#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-fresh.sh - README.md's first commands on a fresh machine.
#
# A minimal Debian bookworm root (debootstrap --variant=minbase), given this
# machine's apt sources and nothing else; in it, as root under chroot (with
# /dev, /proc and /sys bind-mounted): the prerequisites command README.md
# gives, a clone of the project's committed HEAD, and `make vm` in that
# clone, with a cache of its own (empty: nothing is fetched or built before);
# first, as another user, `make vm` must stop at once, naming the apt-get
# command to run.
# Its KTAP must hold the stock kernel's expected verdicts.
#
# The minbase root is made once and kept as a tarball in
# $CACHE/fresh-root/<key>/, key: what debootstrap was given and its version;
# the tarball's sha256 is checked on every use.  The root itself is
# build/fresh/root, removed at the end (--keep leaves it, unmounted).

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

# A run in the fresh root installs every package and fetches the kernel and
# its source: minutes, not hours.
readonly MAKE_VM_BOUND=1800
readonly SUITE=bookworm VARIANT=minbase ARCH=amd64

usage()
{
	cat <<EOF
Usage: $PROG [--commit REV] [--mirror URL] [--keep]

Runs README.md's prerequisites command and \`make vm\` in a fresh minimal
Debian $SUITE root, in a clone of the project, and checks the verdicts.

  --commit REV  clone this commit (default: HEAD; uncommitted changes are
                not in the clone)
  --mirror URL  the Debian mirror for debootstrap (default: the first one
                of this machine's apt sources)
  --keep        leave build/fresh/root in place (unmounted) for a look
  --help        this text

Ends with "N passed, N failed"; exit status 1 if a check failed.
EOF
}

commit=HEAD
mirror=
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--commit) need_arg "$1" $#; commit=$2; shift 2 ;;
	--mirror) need_arg "$1" $#; mirror=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount)"
need_cmd debootstrap chroot mount umount findmnt git tar sha256sum
rev=$(git -C "$TOP" rev-parse --verify "$commit^{commit}") ||
	usage_error "no commit '$commit' in $TOP"

if [ -z "$mirror" ]; then
	mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n 1 | tr -d ' ') ||
		true
	[ -n "$mirror" ] || die "no Debian mirror in this machine's apt sources: give --mirror"
fi

# ---- README.md's commands ------------------------------------------------

# What a bare machine needs first: README.md's first indented apt-get line.
prereq=$(sed -n 's/^    \(apt-get .*\)$/\1/p' "$TOP/README.md" | head -n 1)
prereq=${prereq%%#*}

# ---- the minbase root, made once -----------------------------------------

# base_tarball: the path of a verified tarball of a fresh minbase root.
base_tarball()
{
	local key stamp entry sum

	key="$SUITE $VARIANT $ARCH $mirror debootstrap $(dpkg-query -W -f='${Version}' debootstrap)"
	stamp=$key
	entry=$(cache_dir)/fresh-root/$(printf '%s' "$key" | sha256sum | cut -c1-16)
	entry_lock "$entry"
	if entry_valid "$entry" "$stamp" &&
	   (cd "$entry" && sha256sum --status -c base.tar.gz.sha256); then
		log "using cached $entry"
		printf '%s\n' "$entry/base.tar.gz"
		return
	fi
	[ ! -e "$entry" ] || log "$entry is incomplete or does not verify: making it again"
	entry_remove "$entry"
	entry_tmp "$entry"
	log "debootstrap --variant=$VARIANT $SUITE from $mirror"
	debootstrap --variant="$VARIANT" --arch="$ARCH" "$SUITE" "$ENTRY_TMP/root" \
		"$mirror" >"$ENTRY_TMP/debootstrap.log" 2>&1 ||
		die "debootstrap failed: $(tail -n 3 "$ENTRY_TMP/debootstrap.log")"
	tar --numeric-owner -C "$ENTRY_TMP/root" -czf "$ENTRY_TMP/base.tar.gz" .
	rm -rf --one-file-system "$ENTRY_TMP/root"
	sum=$(cd "$ENTRY_TMP" && sha256sum base.tar.gz)
	printf '%s\n' "$sum" >"$ENTRY_TMP/base.tar.gz.sha256"
	entry_commit "$entry" "$stamp"
	printf '%s\n' "$entry/base.tar.gz"
}

# ---- the fresh root --------------------------------------------------------

root=$TOP/build/fresh/root
log=$TOP/build/fresh

unmount_root()
{
	local m

	# Deepest first; lazily if something still holds a mount.
	for m in $(findmnt -rn -o TARGET | grep -E "^$root(/|$)" | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" || return 1
	done
	! findmnt -rn -o TARGET | grep -qE "^$root(/|$)"
}

remove_root()
{
	[ -e "$root" ] || return 0
	unmount_root || { log "$root is still mounted: not removing it"; return 1; }
	rm -rf --one-file-system "$root"
}

cleanup()
{
	if [ "$keep" -eq 1 ]; then
		unmount_root || log "$root is still mounted"
	else
		remove_root || true
	fi
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
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$root"
tar --numeric-owner -C "$root" -xpzf "$tarball"

# What a fresh machine on this network has: its apt sources and settings
# (in place of debootstrap's one-line sources.list).
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

# The project, cloned the way a user would, by the root's own git.
git clone -q --bare "$TOP" "$root/srv/module_async.git"

if [ -n "$prereq" ] && in_root "$prereq" >"$log/prereq.log" 2>&1; then
	pass "README.md's prerequisites: $prereq"
else
	fail "README.md's prerequisites '${prereq:-none found}' (log: $log/prereq.log)"
fi
if in_root "git clone -q /srv/module_async.git /root/module_async &&
	    git -C /root/module_async checkout -q $rev" >"$log/clone.log" 2>&1; then
	pass "a clone of $rev by the root's own git"
else
	fail "a clone of $rev (log: $log/clone.log)"
fi

# As another user, before the packages are there: the one apt-get command
# to run, a failure, and nothing fetched.
in_root "git clone -q /srv/module_async.git /tmp/user-clone &&
	 chown -R nobody:nogroup /tmp/user-clone" >"$log/user-clone.log" 2>&1 || true
rc=0
chroot --userspec=nobody:nogroup "$root" /usr/bin/env -i HOME=/tmp/user-home \
	PATH=/usr/sbin:/usr/bin:/sbin:/bin make -C /tmp/user-clone vm \
	>"$log/user-make-vm.out" 2>"$log/user-make-vm.log" || rc=$?
if [ "$rc" -ne 0 ] && grep -q '^  apt-get update && apt-get install -y ' "$log/user-make-vm.log" &&
   [ ! -e "$root/tmp/user-home/.cache" ]; then
	pass "make vm as another user: exit $rc, the apt-get command to run, nothing fetched"
else
	fail "make vm as another user: exit $rc (log: $log/user-make-vm.log)"
fi

start=$(date +%s)
rc=0
timeout "$MAKE_VM_BOUND" chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
	TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	make -C /root/module_async vm >"$log/make-vm.out" 2>"$log/make-vm.log" || rc=$?
log "make vm in the fresh root: exit $rc after $(($(date +%s) - start))s"
if [ "$rc" -eq 0 ]; then
	pass "make vm in a fresh root exits 0"
else
	fail "make vm in a fresh root exits $rc: $(tail -n 2 "$log/make-vm.log" | tr '\n' ' ')"
fi

results=$root/root/module_async/build/vm/stock/results.ktap
if [ -f "$results" ]; then
	cp "$results" "$log/results.ktap"
	if "$TOOLS/expected/expected" compare --status "$rc" stock "$log/results.ktap" \
		>"$log/compare.log" 2>&1; then
		pass "the stock kernel's verdicts as expected"
	else
		fail "the stock kernel's verdicts as expected (see $log/compare.log)"
	fi
else
	fail "no build/vm/stock/results.ktap in the fresh root's clone"
fi
checks_summary
