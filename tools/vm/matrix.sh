#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# matrix.sh - run the suite in a VM on each kernel of tools/expected/verdicts,
# then check and tabulate the runs: tools/expected/expected matrix (--help).

# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
export SOURCE_VARIANTS # which kernels vm.sh builds from source
exec "$TOOLS/expected/expected" matrix "$@"
