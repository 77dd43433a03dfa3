/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * NUMA placement: where the runtime allocates each stage's tables and each
 * ring, and the checks of `pipefwd --check`. Pure functions of the
 * topology and an lcore -> socket map (no EAL), so tests use a fake map.
 */
#ifndef PF_NUMA_H
#define PF_NUMA_H

#include <stdint.h>
#include <stdio.h>

#include "pf_topo.h"

/**
 * The NUMA socket of an lcore, -1 when unknown: the EAL's at run time
 * (pf_numa_eal_socket), sysfs for --check, a fake map in tests.
 */
typedef int (*pf_lcore_socket_fn)(unsigned int lcore, void *arg);

/**
 * The socket to allocate the tables stage @p s reads on (lpm, lpm6, acl
 * contexts and sessions, the l2fib table, the neighbour table): that of
 * the lcore that reads them per packet. That is the stage's own lcore; for
 * a table its instances share (PF_STAGE_SHARED), instance 0's; for a table
 * the stages wired to it read (PF_STAGE_UPSTREAM_READS: neigh, through
 * their "neigh" edge), the first of those (in topology order). -1 when
 * that lcore is unknown.
 */
int pf_numa_table_socket(const struct pf_topo *t, uint16_t s, pf_lcore_socket_fn fn, void *arg);

/** The socket of ring @p ring: its consumer's lcore (the one that reads it), -1 unknown. */
int pf_numa_ring_socket(const struct pf_topo *t, uint16_t ring, pf_lcore_socket_fn fn, void *arg);

/** pf_lcore_socket_fn of the running EAL (app/runtime/stage.c): -1 for an lcore it did not enable. */
int pf_numa_eal_socket(unsigned int lcore, void *arg);

/**
 * Warn on @p out ("file: warning: ...") for every stage that polls a PCI
 * port on another NUMA socket than its lcore, and every ring whose producer
 * and consumer lcores sit on different sockets, and every stage that reads
 * a table allocated on another socket (pf_numa_table_socket: instances of
 * a shared table, stages feeding neigh). Sockets come from
 * @p sysroot ("/sys", or a fake tree in tests): cpuN/nodeM entries and PCI
 * numa_node files. Lcores are placed only when the EAL arguments pin them
 * (-l, or --lcores with L@C); anything unknown does not warn.
 * Returns the number of warnings.
 */
unsigned int pf_numa_check(const struct pf_topo *topo, const char *sysroot, FILE *out);

#endif /* PF_NUMA_H */
