#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# matrix.sh - run the suite in a VM on each kernel of tools/expected/verdicts,
# then check and tabulate the runs: tools/expected/expected matrix (--help).

exec "$(dirname "$0")/../expected/expected" matrix "$@"
