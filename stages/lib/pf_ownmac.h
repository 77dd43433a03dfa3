/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The set of pipefwd's own port MACs, for the data path: a frame arriving
 * with one of them as its source is a spoof or a loop (reliability.md case
 * 8: drop `l2_src_is_own_mac`, never learn it). rx checks it for every
 * frame; l2fib checks again so that whatever feeds it never learns one.
 *
 * The test costs one load from a 256-bit filter on the MAC's last byte per
 * frame; only a filter hit compares the full addresses.
 */
#ifndef PF_OWNMAC_H
#define PF_OWNMAC_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "pf_stage_ctl.h"

struct pf_own_macs {
	uint64_t filter[4];              /**< bit b set: some own MAC ends in byte b */
	uint16_t n;
	uint64_t mac[PF_MAX_PORTS];      /**< the 6 bytes in memory order, upper 16 bits 0 */
};

/** The 6 bytes at @p mac as an integer (memory order, upper 16 bits 0). */
static __rte_always_inline uint64_t
pf_mac_u64(const uint8_t *mac)
{
	uint64_t k = 0;

	memcpy(&k, mac, 6);
	return k;
}

/**
 * Fill @p o with the MACs of @p env's ports that have one: configured
 * (`mac:`) or, in a running process, read from the device at start.
 */
static inline void
pf_own_macs_init(struct pf_own_macs *o, const struct pf_stage_env *env)
{
	uint16_t i, j;
	uint64_t k;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < env->n_ports && i < PF_MAX_PORTS; i++) {
		if (!env->ports[i].has_mac)
			continue;
		k = pf_mac_u64(env->ports[i].mac);
		for (j = 0; j < o->n && o->mac[j] != k; j++)
			;
		if (j < o->n)
			continue;
		o->mac[o->n++] = k;
		o->filter[env->ports[i].mac[5] >> 6] |= 1ull << (env->ports[i].mac[5] & 63);
	}
}

/**
 * Add to @p o, read meanwhile by a data path, the MACs of @p add it lacks
 * (ports added live): each written before the count that shows it, so a
 * reader sees the old list or a longer one. Never removes one (a removed
 * port's MAC stays ours); a full list takes no more.
 */
static inline void
pf_own_macs_merge(struct pf_own_macs *o, const struct pf_own_macs *add)
{
	uint16_t i, j, n = o->n;

	for (i = 0; i < add->n && n < PF_MAX_PORTS; i++) {
		for (j = 0; j < n && o->mac[j] != add->mac[i]; j++)
			;
		if (j < n)
			continue;
		o->mac[n] = add->mac[i];
		__atomic_fetch_or(&o->filter[(add->mac[i] >> 40) >> 6],
				  1ull << ((add->mac[i] >> 40) & 63), __ATOMIC_RELEASE);
		__atomic_store_n(&o->n, ++n, __ATOMIC_RELEASE);
	}
}

/** Is the MAC at @p mac one of ours? */
static __rte_always_inline bool
pf_own_mac(const struct pf_own_macs *o, const uint8_t *mac)
{
	uint64_t k;
	uint16_t j;

	if (likely(!((o->filter[mac[5] >> 6] >> (mac[5] & 63)) & 1)))
		return false;
	k = pf_mac_u64(mac);
	for (j = 0; j < o->n; j++)
		if (o->mac[j] == k)
			return true;
	return false;
}

#endif /* PF_OWNMAC_H */
