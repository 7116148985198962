// SPDX-License-Identifier: GPL-2.0
/*
 * ma_overlap_twin - ma_overlap built again under a second name
 *
 * Two loads in their init at once need two modules: this one, ma_overlap's
 * code and knobs as they are (case concurrent_loads_wait_for_their_own).
 */
#include "ma_overlap.c"
