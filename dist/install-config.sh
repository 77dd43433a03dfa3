#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# meson install: put the shipped example topology ($1, installed already) at
# $2 only when $2 does not exist, so a reinstall keeps the operator's edited
# topology (as dpkg keeps a changed conffile). DESTDIR is honoured.
set -eu
src="${DESTDIR:-}$1"
dst="${DESTDIR:-}$2"
if [ -e "$dst" ] || [ -L "$dst" ]; then
	if ! cmp -s "$src" "$dst"; then
		echo "pipefwd: kept $2 as it is (edited); the shipped example is $1"
	fi
	exit 0
fi
mkdir -p "$(dirname "$dst")"
cp "$src" "$dst.tmp.$$"
chmod 0644 "$dst.tmp.$$"
mv "$dst.tmp.$$" "$dst"
echo "pipefwd: installed $2"
