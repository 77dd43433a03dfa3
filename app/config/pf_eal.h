/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The EAL arguments (the topology's `eal` list, then the command line after
 * `--`) read as DPDK 22.11's rte_eal_init reads them: getopt_long over EAL's
 * option table, with its abbreviations (`--file=x` is `--file-prefix=x`),
 * `--opt=v` and `--opt v`, `-lV` and `-l V`. What EAL would refuse, or what
 * pipefwd cannot run with, is an error before EAL starts, located at the
 * topology's node or naming the command line; `--check` and start read
 * them the same way. No DPDK here.
 */
#ifndef PF_EAL_H
#define PF_EAL_H

#include <stdbool.h>
#include <stdint.h>

#include "pf_conf.h"

/**
 * Longest --file-prefix: EAL makes it a directory under its runtime
 * directory (/var/run/dpdk, $XDG_RUNTIME_DIR/dpdk) holding unix sockets whose
 * paths (a secondary's mp_socket_<pid>_<tsc>) must stay under 108 bytes.
 */
#define PF_EAL_PREFIX_MAX 48

/** Highest lcore id + 1 EAL takes (RTE_MAX_LCORE of Debian's DPDK). */
#define PF_EAL_MAX_LCORE 128

/** What the EAL arguments ask for, as far as pipefwd looks. */
struct pf_eal {
	char prefix[PF_EAL_PREFIX_MAX + 1];  /**< the last --file-prefix, "" for none */
	bool no_shconf;                      /**< --no-shconf or --in-memory: no lock file */
	/** -l, -c or --lcores given (EAL takes one of them, once): lcore_set holds it */
	bool has_lcores;
	char lcores_opt[64];                 /**< which one, with its value: "-l 0-3" */
	uint64_t lcore_set[PF_EAL_MAX_LCORE / 64];  /**< bit per lcore id EAL enables */
	bool has_main;                       /**< --main-lcore given: main_lcore */
	unsigned int main_lcore;
	bool mem;                            /**< -m given */
	bool socket_mem;                     /**< --socket-mem given */
	bool no_huge;                        /**< --no-huge given */
};

/** Whether the EAL arguments enable lcore @p id (every id when they choose none). */
bool pf_eal_lcore_on(const struct pf_eal *e, unsigned int id);

/** The main lcore EAL will take: --main-lcore, else the first of the set, else 0. */
unsigned int pf_eal_main_lcore(const struct pf_eal *e);

/**
 * Read @p argv[0..argc) into @p e (which keeps what earlier calls read: the
 * topology's list, then the command line). @p nodes[i] is the YAML node
 * argv[i] came from, for the messages; NULL for the command line. Errors go
 * to @p errs. Returns 0 or -EINVAL.
 */
int pf_eal_read(struct pf_eal *e, int argc, char *const *argv, const struct pf_node *const *nodes,
		struct pf_errs *errs);

#endif /* PF_EAL_H */
