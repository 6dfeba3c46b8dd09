#!/usr/bin/env bash
# Regenerate the Python bindings in thrift_idl/ from our IDL.
#
#   thrift_idl/generate.sh           regenerate fb303/, hive_metastore/, hudi_metastore/, hudi_metaserver/
#   thrift_idl/generate.sh --check   regenerate into a temp dir and diff
#                                    against the committed files (exit 1 on
#                                    any difference)
#
# Needs the Apache Thrift compiler (THRIFT=/path/to/thrift to override).
# The committed bindings were produced with thrift 0.17.0; other compiler
# versions may emit slightly different code and make --check fail.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
thrift_bin="${THRIFT:-thrift}"
if [[ -n "${PYTHON:-}" ]]; then
  py="$PYTHON"
elif [[ -x "$here/../.venv/bin/python" ]]; then
  py="$here/../.venv/bin/python"
else
  py=python3
fi

check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

command -v "$thrift_bin" >/dev/null 2>&1 || { echo "generate.sh: '$thrift_bin' not found" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Plain `py` generator: no slots/new_style variants. -r also emits fb303.
"$thrift_bin" -r --gen py -out "$tmp" "$here/hive_metastore.thrift"
gen="$tmp/thrift_idl"
rm -f "$gen"/fb303/*-remote "$gen"/hive_metastore/*-remote   # CLI helpers we do not ship
"$py" "$here/patch_bindings.py" "$gen/hive_metastore/ttypes.py"
# The Hudi extension service (extends ThriftHiveMetastore; its include is generated above).
"$thrift_bin" --gen py -out "$tmp" "$here/hudi_metastore.thrift"
rm -f "$gen"/hudi_metastore/*-remote
"$py" "$here/patch_bindings.py" --exceptions-only "$gen/hudi_metastore/ttypes.py"
# Apache Hudi's metaserver protocol (served on the same port).
"$thrift_bin" --gen py -out "$tmp" "$here/hudi_metaserver.thrift"
rm -f "$gen"/hudi_metaserver/*-remote
"$py" "$here/patch_bindings.py" --exceptions-only "$gen/hudi_metaserver/ttypes.py"

packages=(fb303 hive_metastore hudi_metastore hudi_metaserver)

if (( check )); then
  status=0
  for pkg in "${packages[@]}"; do
    diff -r -u -x __pycache__ "$gen/$pkg" "$here/$pkg" || status=1
  done
  if (( status )); then
    echo "generate.sh --check: committed bindings differ from the IDL ($("$thrift_bin" -version));" \
         "run thrift_idl/generate.sh and commit the result" >&2
  fi
  exit "$status"
fi

for pkg in "${packages[@]}"; do
  rm -rf "${here:?}/$pkg"
  cp -r "$gen/$pkg" "$here/$pkg"
done
echo "generated: ${packages[*]/#/thrift_idl/}"
