#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kmod.sh - the guest's kmod, static (the cases time modprobe: under
# TCG Debian's dynamic one costs 30 ms more an exec), from Debian's source
# of the host's kmod version, with xz and zstd (trixie's compressed
# modules), without OpenSSL (no signature read); prints its path.

set -euo pipefail

# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/debian.sh
. "$TOOLS/debian.sh"

readonly CONFIGURE_ARGS=(--sysconfdir=/etc --disable-manpages --disable-gtk-doc
	--disable-test-modules --without-openssl --with-xz --with-zstd)

usage()
{
	echo "Usage: $PROG [--help]: build a static kmod (cached) and print its path"
}

case ${1:-} in
'') ;;
-h | --help) usage; exit 0 ;;
*) usage_error "unknown option '$1'" ;;
esac
need_cmd dpkg-query dpkg-source apt-get autoreconf libtoolize pkg-config make gcc strip

version=$(dpkg-query -W -f '${Version}' kmod 2>/dev/null) ||
	die "kmod is not installed (tools/deps.sh installs it)"
check_debversion "$version"
key=$({ printf '%s\n' "$version" "${CONFIGURE_ARGS[@]}" "$(gcc --version | head -n 1)"
	sha256sum <"$0"; } | sha256sum)
entry=$(cache_dir)/kmod/$version-${key:0:12}
stamp="kmod $version ${CONFIGURE_ARGS[*]} static"

entry_lock "$entry"
if entry_valid "$entry" "$stamp" && entry_verify "$entry" kmod; then
	echo "$entry/kmod"
	exit 0
fi
entry_remove "$entry"
entry_tmp "$entry"

release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$release" ] || die "/etc/os-release names no VERSION_CODENAME: not Debian?"
deb_release "$release" deb-src
log "building kmod $version from Debian $release's source (static; $entry)"
src=$ENTRY_TMP/src
mkdir "$src"
# apt checks the files against the release's signed Sources index.
(cd "$src" && apt_get source -q --download-only "kmod=$version" >&2) ||
	die "apt-get source kmod=$version failed (Debian $release's sources: $APT_CONFIG)"
dsc=("$src"/kmod_*.dsc)
[ -f "${dsc[0]}" ] || die "apt-get source kmod=$version fetched no .dsc"
dpkg-source -q -x "${dsc[0]}" "$src/kmod" >&2 || die "dpkg-source -x ${dsc[0]##*/} failed"
# What autogen.sh does when gtk-doc is not there (its docs are not built).
touch "$src/kmod/libkmod/docs/gtk-doc.make"
# configure fails without liblzma or libzstd, the link without their
# static libraries (-all-static).
(cd "$src/kmod" && autoreconf -fi && ./configure -q "${CONFIGURE_ARGS[@]}" &&
	make -s -j"$(nproc)" tools/kmod LDFLAGS=-all-static) >"$ENTRY_TMP/build.log" 2>&1 ||
	die "building kmod failed: $(tail -n 5 "$ENTRY_TMP/build.log")"
strip -o "$ENTRY_TMP/kmod" "$src/kmod/tools/kmod"
rm -rf "$src"
entry_sum kmod
entry_commit "$entry" "$stamp"
log "built $("$entry/kmod" --version | tr '\n' ' ')($entry/kmod)"
echo "$entry/kmod"
