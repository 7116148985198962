# SPDX-License-Identifier: GPL-2.0
#
# Debian's packages, sourced after lib.sh: apt made to serve a release, its
# answers kept, packages looked up and downloaded against its signed indexes.

# shellcheck shell=bash

# A private configuration's lists (deb_private) are updated when older than
# a day: Debian keeps a .deb gone from the indexes 36 hours in the pool.
DEB_LISTS_MAX_AGE=86400
DEB_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# apt_get ARGS...: apt-get as this user, never a sandbox one (it cannot write
# to the cache).
apt_get()
{
	apt-get -o APT::Sandbox::User="$(id -un)" "$@"
}

# apt_memo NAME ARGS...: the path of the memo $CACHE/apt-answers/NAME.<key>,
# <key> a checksum of ARGS and of what apt answers from (/etc/apt, the lists,
# dpkg's status) and of the locale asked (C: a memo of before, perhaps
# translated, is never read); fails where /etc/apt moves those.
apt_memo()
{
	local private=() key

	! grep -Eqs '^[[:space:]]*Dir([[:space:]"{]|::(State|Etc|Bin))' \
		/etc/apt/apt.conf /etc/apt/apt.conf.d/* || return 1
	[ -z "${APT_CONFIG:-}" ] ||
		private=("$APT_CONFIG" "${APT_CONFIG%/*}"/{sources.list,preferences}*
			 "${APT_CONFIG%/*}"/lists/*)
	key=$({
		printf '%s\0' LC_ALL=C "${APT_CONFIG:-}" "${@:2}"
		stat -L -c '%s %y %i %n' /var/lib/dpkg/status /etc/apt/* /etc/apt/*.d/* \
			/var/lib/apt/lists/* ${private[@]+"${private[@]}"} 2>/dev/null || true
	} | sha256sum)
	printf '%s\n' "$(cache_dir)/apt-answers/$1.${key%% *}"
}

# memo_keep FILE LINE...: the LINEs written to FILE; memos live a day.
memo_keep()
{
	{ mkdir -p "${1%/*}" && printf '%s\n' "${@:2}" >"$1.tmp.$$" && mv "$1.tmp.$$" "$1"; } ||
		die "cannot keep apt's answers in ${1%/*}"
	find "${1%/*}" -type f -mmin +"$((DEB_LISTS_MAX_AGE / 60))" -delete 2>/dev/null || true
}

# apt_cache ARGS...: apt-cache ARGS's output and status, kept (a query costs
# most of a second); untranslated, whatever the user's locale, as it is parsed.
apt_cache()
{
	local f out rc=0

	if ! f=$(apt_memo apt-cache "$@"); then
		LC_ALL=C apt-cache "$@" 2>/dev/null
		return
	fi
	if [ ! -f "$f" ]; then
		out=$(LC_ALL=C apt-cache "$@" 2>/dev/null) || rc=$?
		memo_keep "$f" "$rc" ${out:+"$out"}
	fi
	{ read -r rc; cat; } <"$f"
	return "$rc"
}

# apt_lists_fresh DIR: DIR's lists are younger than DEB_LISTS_MAX_AGE, not future.
apt_lists_fresh()
{
	local age

	[ -f "$1/updated" ] || return 1
	age=$(($(date +%s) - $(stat -c %Y "$1/updated")))
	[ "$age" -ge 0 ] && [ "$age" -lt "$DEB_LISTS_MAX_AGE" ]
}

# deb_release RELEASE [deb-src]: make apt serve RELEASE (or its sources):
# the machine's apt when it lists RELEASE, else deb_private from its first
# Debian and Debian-Security mirrors.  A backports suite is private and
# alone (else apt's candidate is the release's kernel).
deb_release()
{
	local rel=$1 kind=${2:-deb} found machine debian security

	check_release "$rel"
	unset APT_CONFIG
	found=$(apt_cache policy |
		awk -v want="$kind/$rel" '$1 ~ /^[0-9]+$/ && $NF == "Packages" {
			uri = $2; suite = $3; sub(/\/.*/, "", suite); next
		     }
		     uri != "" && $1 == "release" && match($2, /(^|,)l=[^,]*/) {
			l = substr($2, RSTART, RLENGTH); sub(/^,?l=/, "", l)
			m = m || l == "Debian" && "deb/" suite == want && want !~ /-backports$/
			if (l == "Debian" && d == "") d = uri
			if (l == "Debian-Security" && s == "") s = uri
		     }
		     { uri = "" }
		     END { print (m ? "true" : "false") "|" d "|" s }') ||
		die "could not read the machine's apt sources"
	IFS='|' read -r machine debian security <<<"$found"
	$machine || deb_private "$rel" "$kind" "$debian" "$security"
}

# deb_private RELEASE KIND DEBIAN SECURITY: APT_CONFIG exported, in $CACHE/apt/,
# for RELEASE's KIND (deb, deb-src) from mirrors DEBIAN and SECURITY; paths only.
deb_private()
{
	local rel=$1 kind=$2 dir suites conf

	[ -n "$3" ] || die "the machine's apt sources name no Debian mirror" \
		"(no suite labelled Debian: run apt-get update)"
	[ -r "$DEB_KEYRING" ] || die "no $DEB_KEYRING (install debian-archive-keyring)"
	dir=$(cache_dir)/apt/$rel${kind#deb}
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" \
		"$dir/sources.list.d" "$dir/preferences.d"
	exec 8>"$dir.lock"
	flock 8
	suites=("$3 $rel")
	[[ $rel =~ ^(sid|unstable|experimental|.*-backports)$ ]] ||
		suites+=("$3 $rel-updates" ${4:+"$4 $rel-security"})
	printf "$kind [signed-by=$DEB_KEYRING] %s main\n" "${suites[@]}" >"$dir/sources.list.new"
	printf '%s\n' "// module_async: Debian $rel beside the machine's apt" \
		"Dir::Etc::sourcelist \"$dir/sources.list\";" \
		"Dir::Etc::sourceparts \"$dir/sources.list.d\";" \
		"Dir::Etc::preferences \"$dir/preferences\";" \
		"Dir::Etc::preferencesparts \"$dir/preferences.d\";" \
		"Dir::State::Lists \"$dir/lists\";" \
		"Dir::Cache \"$dir/cache\";" >"$dir/apt.conf.new"
	# A file changed, its lists are stale; one left alone keeps apt_memo's key.
	for conf in sources.list apt.conf; do
		cmp -s "$dir/$conf.new" "$dir/$conf" && rm "$dir/$conf.new" && continue
		mv "$dir/$conf.new" "$dir/$conf"
		rm -f "$dir/updated"
	done
	export APT_CONFIG=$dir/apt.conf
	[ "$(apt-config dump --format '%v%n' Dir::State::Lists Dir::Etc::sourcelist)" = \
	  "$dir/lists"$'\n'"$dir/sources.list" ] ||
		die "/etc/apt/apt.conf.d overrides the paths $APT_CONFIG sets"
	if ! apt_lists_fresh "$dir"; then
		log "apt-get update for Debian $rel${kind#deb} (lists in $dir/lists)"
		apt_get update -q -o APT::Update::Error-Mode=any >&2 ||
			die "apt-get update for Debian $rel failed (sources: $dir/sources.list)"
		touch "$dir/updated"
	fi
	exec 8>&-
}

# deb_field PACKAGE VERSION FIELD: the field, empty for a version apt does
# not know.  Readers of apt read to the end (else SIGPIPE fails the pipe).
deb_field()
{
	apt_cache show "$1=$2" |
		awk -v f="$3:" '$1 == f && !n++ { sub(/^[^:]*: */, ""); print }'
}

# deb_version PACKAGE [DEBVERSION]: DEBVERSION, else apt's candidate, or fail.
deb_version()
{
	local ver=${2:-}

	[ -n "$ver" ] ||
		ver=$(apt_cache policy "$1" | awk '$1 == "Candidate:" && !n++ { print $2 }')
	[ -n "$ver" ] && [ "$ver" != "(none)" ] && printf '%s\n' "$ver"
}

# deb_index VERSION PACKAGE...: "PACKAGE SHA256 ARCH" of each, in that order;
# dies naming one apt does not know at VERSION.
deb_index()
{
	local ver=$1 index pkg line

	shift
	index=$(apt_cache show "${@/%/=$ver}" |
		awk '$1 == "Package:" { p = $2 }
		     $1 == "Architecture:" { a[p] = $2 }
		     $1 == "SHA256:" && !(p in s) { s[p] = $2 }
		     END { for (p in s) print p, s[p], a[p] }')
	for pkg; do
		line=$(grep "^$pkg " <<<"$index") ||
			die "package $pkg version $ver is not known to apt" \
				"(see apt-cache madison $pkg)"
		printf '%s\n' "$line"
	done
}

# deb_fetch PACKAGE VERSION SHA256 ARCH DIR: the path of DIR/PACKAGE_VERSION_ARCH.deb
# with that sha256, downloaded unless there.
deb_fetch()
{
	local pkg=$1 ver=$2 sha=$3 arch=$4 dir=$5 deb dl fetched

	deb="$dir/${pkg}_${ver//:/%3a}_$arch.deb"
	stale_remove "$dir/.download."
	if [ -f "$deb" ] && [ "$(sha256sum <"$deb")" = "$sha  -" ]; then
		log "using cached ${deb##*/}"
		printf '%s\n' "$deb"
		return
	fi
	[ ! -f "$deb" ] || log "cached ${deb##*/} does not match apt's sha256: downloading again"
	rm -f "$deb"
	mkdir -p "$dir"
	dl=$(mktemp -d "$dir/.download.$$.XXXXXX")
	log "downloading $pkg=$ver"
	# Interrupted or failed, the download goes with its subshell.
	(trap 'rm -rf "$dl"' EXIT
	 cd "$dl"
	 apt_get download -q "$pkg=$ver" >&2 || die "apt-get download $pkg=$ver failed"
	 fetched=(*.deb)
	 [ -f "${fetched[0]}" ] || die "apt-get download $pkg=$ver left no .deb"
	 [ "$(sha256sum <"${fetched[0]}")" = "$sha  -" ] ||
		die "$pkg=$ver: downloaded .deb does not match apt's sha256"
	 mv "${fetched[0]}" "$deb") || exit "$EXIT_INFRA"
	printf '%s\n' "$deb"
}

# deb_depends PACKAGE VERSION REGEX: what PACKAGE=VERSION depends on (any
# alternative) whose names match REGEX, one a line.
deb_depends()
{
	deb_field "$1" "$2" Depends | tr ',|' '\n' |
		awk -v re="$3" '{ sub(/^ +/, ""); sub(/ .*/, "") } $0 ~ re'
}

# A Debian amd64 kernel image of any generation (linux-image-5.10.0-46-amd64,
# -7.2.13+deb14-amd64), no flavour (cloud, rt), no -unsigned, -dbg twin.
readonly DEB_IMAGE_RE='^linux-image-[0-9]+\.[0-9]+\.[0-9]+(-[0-9]+)?(\+[a-z0-9]+)?-amd64$'

# deb_kernel_release DEBVERSION: the release (6.1.0-57-amd64) of the kernel
# linux-image-amd64 depends on, else (6.12.118+deb12) the image at DEBVERSION.
deb_kernel_release()
{
	local ver=$1 images pkg

	pkg=$(deb_depends linux-image-amd64 "$ver" '^linux-image-.*-amd64$' | sed -n 1p)
	if [ -z "$pkg" ]; then
		mapfile -t images < <(apt_cache pkgnames linux-image- |
			grep -E "$DEB_IMAGE_RE")
		[ "${#images[@]}" -gt 0 ] || return 1
		pkg=$(apt_cache madison "${images[@]}" |
			awk -F' *[|] *' -v v="$ver" '$2 == v && !n++ { print $1 }')
		pkg=${pkg# }
	fi
	[ -n "$pkg" ] || return 1
	printf '%s\n' "${pkg#linux-image-}"
}

# headers_makefile HEADERS COMMON: HEADERS' Makefile (stdin), its include of
# COMMON's and 7.2's KBUILD_OUTPUT made relative (an entry works wherever
# the cache is); any other line dies.
# shellcheck disable=SC2016 # make expands it
readonly MAKEFILE_HERE='$(dir $(lastword $(MAKEFILE_LIST)))'
headers_makefile()
{
	local line included=false here=$MAKEFILE_HERE

	while IFS= read -r line; do
		case $line in
		"include /usr/src/$2/Makefile")
			printf 'include %s../%s/Makefile\n' "$here" "$2"
			included=true
			;;
		"KBUILD_OUTPUT=/usr/src/$1" | "KBUILD_OUTPUT = /usr/src/$1")
			printf 'KBUILD_OUTPUT := %s\n' "\$(abspath $here)" ;;
		'' | '#'*) printf '%s\n' "$line" ;;
		*) die "$1/Makefile: unexpected line '$line'" ;;
		esac
	done
	$included || die "$1/Makefile does not include /usr/src/$2/Makefile as expected"
}
