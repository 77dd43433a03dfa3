/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the lpm stage (every file; its parameters are stages/lpm_routes.c)
 * and its unit tests: the edges, the parsed configuration (next hops and
 * routes, stages/lib/pf_routes_conf.h) and the RFC 1624 checksum update.
 */
#ifndef PF_LPM_H
#define PF_LPM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "pf_lrn.h"
#include "pf_routes_conf.h"
#include "pf_stage.h"

/* The stage's edges (stages/lpm.c names them; the parser asks about neigh). */
enum { LPM_EDGE_DROP, LPM_EDGE_OUT, LPM_EDGE_ICMP, LPM_EDGE_FRAG, LPM_EDGE_NEIGH, LPM_EDGE_HOST,
	LPM_EDGE_MAX };

enum lpm_lookup_mode {
	LPM_LOOKUP_X4 = 0,      /* rte_lpm_lookupx4, four at a time (default) */
	LPM_LOOKUP_BULK,        /* rte_lpm_lookup_bulk over the burst */
	LPM_LOOKUP_SCALAR,      /* rte_lpm_lookup per packet: the reference */
};

struct lpm_cfg {
	enum lpm_lookup_mode mode;
	struct pf_lrn_conf learnt;   /* `learnt:` (0 routes: none taken; stages/lpm_learnt.c) */
	struct pf_rconf rt;          /* next hops, routes (af 4), routes_file */
};

void lpm_cfg_free(void *cfg);

/**
 * The stage's parse op: its parameters (nexthops, routes, routes_file,
 * lookup, learnt) into a new struct lpm_cfg stored in sc->cfg; next hops by
 * address need the neigh edge. Every problem is recorded in @p errs with its
 * location. Returns 0 or -EINVAL / -ENOMEM.
 */
int lpm_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs);

/** Live change to the parsed routes (the stage's edit op, app/control/pf_changes.h). */
int lpm_cfg_edit(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_change *ch,
		 struct pf_errs *errs);

/**
 * RFC 1624 eqn. 3: the header checksum @p hc after one 16-bit word of the
 * covered data changed from @p m to @p m_new: HC' = ~(~HC + ~m + m').
 * One's complement sums do not depend on byte order, so all three values may
 * be taken straight from the packet (network order). Unlike HC + m - m'
 * (eqn. 2) it never produces 0xffff where a full recompute gives 0x0000.
 */
static inline uint16_t
lpm_cksum_adjust(uint16_t hc, uint16_t m, uint16_t m_new)
{
	uint32_t sum = (uint32_t)(uint16_t)~hc + (uint16_t)~m + m_new;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/**
 * Decrement the TTL of the IPv4 header at @p ip (any alignment) and update
 * its checksum incrementally: lpm_cksum_adjust with the word change folded
 * in. The TTL shares a 16-bit word with the protocol; taken as the CPU loads
 * it (little-endian: TTL in the low byte) the word drops by 1, which adds
 * -1 = 0xfffe in one's complement, or, when TTL 0 wraps to 255, adds 0x00ff.
 * One fold is enough: ~HC + 0xfffe < 0x1ffff.
 */
static inline void
lpm_ttl_dec(void *ip)
{
	uint8_t *h = ip;
	uint32_t sum;
	uint16_t ck;

	RTE_BUILD_BUG_ON(RTE_BYTE_ORDER != RTE_LITTLE_ENDIAN);
	memcpy(&ck, h + 10, 2);
	sum = (uint32_t)(uint16_t)~ck + (h[8] != 0 ? 0xfffe : 0x00ff);
	sum = (sum & 0xffff) + (sum >> 16);
	ck = (uint16_t)~sum;
	h[8]--;
	memcpy(h + 10, &ck, 2);
}

/**
 * lpm_ttl_dec for a TTL of at least 1 (a packet being forwarded has 2 or
 * more): the word change is always -1, so eqn. 3 reduces to HC' = HC + 1,
 * plus one more where the end-around carry of ~HC + 0xfffe does not come
 * (HC 0xfffe and 0xffff): no complements, no fold.
 */
static inline void
lpm_ttl_dec_fwd(void *ip)
{
	uint8_t *h = ip;
	uint16_t ck;

	memcpy(&ck, h + 10, 2);
	ck = (uint16_t)(ck + 1u + ((ck + 2u) >> 16));
	h[8]--;
	memcpy(h + 10, &ck, 2);
}

#endif /* PF_LPM_H */
