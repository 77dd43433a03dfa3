/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Incremental updates of an rte_lpm table (DIR-24-8), one route at a time,
 * with readers running: what a routing daemon's updates need, where
 * rte_lpm_add/rte_lpm_delete scan their rules by depth (linear in the routes
 * of that length: far too slow at a million routes) and a rebuild costs a
 * second.
 *
 * The routes the table holds are kept in an rte_rib (a binary trie), so a
 * delete finds the route that covers the prefix in O(32) and an update
 * writes only the table entries the prefix owns: those whose depth is at most
 * its length (more specific routes keep theirs). A route longer than /24
 * takes a tbl8 group for its /24, filled before the tbl24 entry points to
 * it; a group whose entries all came from /24-or-shorter routes again folds
 * back into its tbl24 entry, and is reused only after every worker passed a
 * quiescent point (pf_rcu_start/pf_rcu_done). Every entry is one 32-bit
 * store, so a reader sees the old route or the new one, never a mix.
 *
 * One writer (the control side); the data path reads the rte_lpm as usual
 * (rte_lpm_lookup*, or its tbl24 directly as lpm's fast path does). The
 * default route (length 0) is not in the table: the caller keeps it.
 */
#ifndef PF_DIR24_H
#define PF_DIR24_H

#include <stdint.h>

#include <rte_lpm.h>

struct pf_dir24;

/**
 * Writer state for @p lpm, whose tbl8 groups [0, @p first_free) are in use
 * (a table built beforehand) and [@p first_free, @p n_groups) free; room
 * for @p max_routes routes in the trie. Returns NULL on ENOMEM.
 */
struct pf_dir24 *pf_dir24_create(struct rte_lpm *lpm, uint32_t first_free, uint32_t n_groups,
				 uint32_t max_routes, int socket);
void pf_dir24_free(struct pf_dir24 *d);

/**
 * Record route @p ip/@p len -> @p hop that the table holds already (written
 * while it was built), so that later updates know it. 0 or -ENOSPC.
 */
int pf_dir24_note(struct pf_dir24 *d, uint32_t ip, uint8_t len, uint32_t hop);

/**
 * Add route @p ip/@p len (host order, host bits zero, 1..32) -> @p hop (a
 * 24-bit next-hop value, flags included), or replace its next hop. 0,
 * -EINVAL (bad prefix or hop), -ENOSPC (trie or tbl8 groups full: nothing
 * changed).
 */
int pf_dir24_add(struct pf_dir24 *d, uint32_t ip, uint8_t len, uint32_t hop);

/** Remove route @p ip/@p len: its entries take the covering route's. 0 or -ENOENT. */
int pf_dir24_del(struct pf_dir24 *d, uint32_t ip, uint8_t len);

/**
 * The next hop of route @p ip/@p len exactly, 0 or -ENOENT. The writer's
 * (it remembers the prefix: a pf_dir24_add or pf_dir24_del of the same one
 * that follows does not walk the trie again).
 */
int pf_dir24_get(struct pf_dir24 *d, uint32_t ip, uint8_t len, uint32_t *hop);

/**
 * Call @p fn for every route whose next hop is @p hop (the writer may then
 * pf_dir24_add the route with another: a next hop that changed its flags).
 * Returns how many.
 */
uint32_t pf_dir24_each_hop(struct pf_dir24 *d, uint32_t hop,
			   void (*fn)(void *arg, uint32_t ip, uint8_t len), void *arg);

/** The build handed out tbl8 groups [0, @p used) itself: the trie has [used, n) to give. */
void pf_dir24_reserve(struct pf_dir24 *d, uint32_t used);

/** Call @p fn for every route (its prefix and next-hop value). The writer may pf_dir24_add. */
void pf_dir24_walk(struct pf_dir24 *d, void (*fn)(void *arg, uint32_t ip, uint8_t len,
						  uint32_t hop), void *arg);

/** Give back the folded tbl8 groups whose grace period ended (also done when none is free). */
void pf_dir24_reclaim(struct pf_dir24 *d);

/** Routes held, tbl8 groups in use (folded ones waiting for their grace period included). */
uint32_t pf_dir24_routes(const struct pf_dir24 *d);
uint32_t pf_dir24_groups_used(const struct pf_dir24 *d);

#endif /* PF_DIR24_H */
