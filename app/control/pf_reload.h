/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Live reload: re-read the topology file, validate it fully, compare it with
 * what runs and apply what can change live (lcore map, ring bursts, table
 * contents through the stages' update hooks). Anything else is refused with
 * the key named; a file with any error changes nothing.
 */
#ifndef PF_RELOAD_H
#define PF_RELOAD_H

#include <stdint.h>

#include "pf_runtime.h"

struct pf_reload_status {
	uint64_t generation;       /**< configurations applied since start (0 = the first) */
	uint64_t failures;         /**< reloads refused or failed */
	uint64_t loaded_unix;      /**< wall time the running configuration was applied */
	double last_ms;            /**< duration of the last reload attempt */
	double max_ms;             /**< longest applied reload */
	int last_rc;               /**< 0 applied, <0 refused/failed */
	char last_msg[1024];       /**< what was applied, or why not */
};

extern struct pf_reload_status pf_reload_status;

/**
 * Reload @p path into the running @p rt. Returns 0 when applied (also when
 * nothing changed), -EINVAL when refused (errors logged, nothing changed).
 */
int pf_reload(struct pf_runtime *rt, const char *path);

/** Append "; @p more" to the last reload's message (what its caller did besides). */
void pf_reload_note(const char *more);

/**
 * The first file @p new read (the topology or a table file) that differs
 * from what @p rt loaded, or NULL when both read the same files unchanged.
 * The pointer is into @p new.
 */
const char *pf_reload_file_changed(const struct pf_runtime *rt, const struct pf_topo *new);

/**
 * Apply @p new, the running topology file with live table changes applied
 * (pf_topo_load_edited), when only the stages of YAML stage @p group differ
 * from what runs (@p group "": a port change, whatever stages follow it). Returns 0 (new published, taken over) or -EINVAL with
 * errors (@p new freed, nothing changed). Telemetry lock held.
 */
int pf_reload_live(struct pf_runtime *rt, struct pf_topo *new, const char *group,
		   struct pf_errs *errs);

#endif /* PF_RELOAD_H */
