#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kmod.sh - build the kmod the guest runs as modprobe, and print its
# path: $CACHE/kmod/<version>-<key>/kmod.
#
# The kernel runs /sbin/modprobe for each request_module(), and the cases
# time what it waits for.  Under TCG the dynamic loader alone costs an exec
# of Debian's kmod 30 to 40 ms (kmod 30 links libcrypto, liblzma and
# libzstd: 21,000 relocations), against 4 ms for a static binary.  So the
# guest's kmod is built here, static, from Debian's kmod source package of
# the version the host has installed (apt-get source from the host's
# release, through a private apt configuration: tools/debian.sh deb_release),
# with Debian's patches, configured without OpenSSL (modinfo's signature
# fields, which the suite does not read; Debian's installer kmod leaves it
# out too) and with xz and zstd (the compressed modules of trixie and later).

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/debian.sh
. "$TOOLS/debian.sh"

readonly CONFIGURE_ARGS=(--sysconfdir=/etc --disable-manpages --disable-gtk-doc
	--disable-test-modules --without-openssl --with-xz --with-zstd)

usage()
{
	cat <<EOF
Usage: $PROG [--help]

Build kmod, static, from Debian's source package of the host's kmod
version and print the binary's path (in the cache, reused while it matches
its checksum). Needs deb-src access to the host's Debian release.
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
need_cmd dpkg-query dpkg-source apt-get autoreconf libtoolize pkg-config make gcc strip

version=$(dpkg-query -W -f '${Version}' kmod 2>/dev/null) ||
	die "kmod is not installed (tools/deps.sh installs it)"
check_debversion "$version"
# Made from: that version, how it is built, the compiler and this script.
key=$({ printf '%s\n' "$version" "${CONFIGURE_ARGS[@]}" "$(gcc --version | head -n 1)"
	sha256sum <"$0"; } | sha256sum)
key=${key:0:12}
entry=$(cache_dir)/kmod/$version-$key
stamp="kmod $version ${CONFIGURE_ARGS[*]} static"

usable()
{
	entry_valid "$entry" "$stamp" && entry_verify "$entry" kmod
}

if usable; then
	echo "$entry/kmod"
	exit 0
fi
entry_lock "$entry"
if usable; then
	echo "$entry/kmod"
	exit 0
fi
entry_remove "$entry"
entry_tmp "$entry"

release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$release" ] || die "/etc/os-release names no VERSION_CODENAME: not Debian?"
deb_release "$release" deb-src
log "building kmod $version from Debian $release's source (static; $entry)"
mkdir "$ENTRY_TMP/src"
# apt checks the files against the release's signed Sources index.
(cd "$ENTRY_TMP/src" &&
	apt-get source -q --download-only -o APT::Sandbox::User="$(id -un)" \
		"kmod=$version" >&2) ||
	die "apt-get source kmod=$version failed (Debian $release's sources: $APT_CONFIG)"
dsc=("$ENTRY_TMP"/src/kmod_*.dsc)
[ -f "${dsc[0]}" ] || die "apt-get source kmod=$version fetched no .dsc"
dpkg-source -q -x "${dsc[0]}" "$ENTRY_TMP/src/kmod" >&2 ||
	die "dpkg-source -x ${dsc[0]##*/} failed"
src=$ENTRY_TMP/src/kmod
# What autogen.sh does when gtk-doc is not there (its docs are not built).
touch "$src/libkmod/docs/gtk-doc.make"
(cd "$src" && autoreconf -fi && ./configure -q "${CONFIGURE_ARGS[@]}" &&
	make -s -j"$(nproc)" tools/kmod LDFLAGS=-all-static) >"$ENTRY_TMP/build.log" 2>&1 ||
	die "building kmod failed: $(tail -n 5 "$ENTRY_TMP/build.log")"
strip -o "$ENTRY_TMP/kmod" "$src/tools/kmod"
if ldd "$ENTRY_TMP/kmod" >/dev/null 2>&1; then
	die "the kmod built is not static"
fi
features=$("$ENTRY_TMP/kmod" --version | tr '\n' ' ')
case $features in
*+XZ*+ZSTD* | *+ZSTD*+XZ*) ;;
*) die "the kmod built lacks xz or zstd: $features" ;;
esac
rm -rf "$src" "$ENTRY_TMP/src"
entry_sum kmod
entry_commit "$entry" "$stamp"
log "built $features($entry/kmod)"
echo "$entry/kmod"
