/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * NUMA placement checks for `pipefwd --check` (no DPDK).
 */
#ifndef PF_NUMA_H
#define PF_NUMA_H

#include <stdio.h>

#include "pf_topo.h"

/**
 * Warn on @p out ("file: warning: ...") for every stage that polls a PCI
 * port on another NUMA socket than its lcore, and every ring whose producer
 * and consumer lcores sit on different sockets. Sockets come from
 * @p sysroot ("/sys", or a fake tree in tests): cpuN/nodeM entries and PCI
 * numa_node files. Lcores are placed only when the EAL arguments pin them
 * (-l, or --lcores with L@C); anything unknown does not warn.
 * Returns the number of warnings.
 */
unsigned int pf_numa_check(const struct pf_topo *topo, const char *sysroot, FILE *out);

#endif /* PF_NUMA_H */
