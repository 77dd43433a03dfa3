/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the lpm stage (every file; its parser is stages/lpm_routes.c),
 * lpm6 (which shares the parser's pieces) and their unit tests: the edges,
 * the parsed configuration (next hops and routes, read from the topology
 * and a route file without DPDK) and the RFC 1624 checksum update.
 */
#ifndef PF_LPM_H
#define PF_LPM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "pf_lrn.h"
#include "pf_stage.h"

/** Next hops are indexes into a table; rte_lpm stores 24 bits. */
#define LPM_MAX_NEXTHOPS 4096
/** Routes one stage accepts (inline plus file). */
#define LPM_MAX_ROUTES (16u << 20)
/** Route file lines longer than this are refused. */
#define LPM_LINE_MAX 256

/* The stage's edges (stages/lpm.c names them; the parser asks about neigh). */
enum { LPM_EDGE_DROP, LPM_EDGE_OUT, LPM_EDGE_ICMP, LPM_EDGE_FRAG, LPM_EDGE_NEIGH, LPM_EDGE_HOST,
	LPM_EDGE_MAX };

enum lpm_lookup_mode {
	LPM_LOOKUP_X4 = 0,      /* rte_lpm_lookupx4, four at a time (default) */
	LPM_LOOKUP_BULK,        /* rte_lpm_lookup_bulk over the burst */
	LPM_LOOKUP_SCALAR,      /* rte_lpm_lookup per packet: the reference */
};

struct lpm_nh_conf {
	char name[PF_NAME_MAX];
	uint16_t port;          /* egress port index */
	uint8_t mac[6];         /* destination MAC written on the frame */
	uint32_t gw;            /* next hop by address (host order), MAC resolved; 0: static mac */
};

struct lpm_route {
	uint32_t prefix;        /* host order, host bits clear */
	uint32_t nh;            /* index into lpm_cfg.nh */
	uint32_t line;          /* where it was defined (file or topology line) */
	uint16_t col;
	uint8_t len;
	uint8_t from_file;      /* 1: routes_file, 0: inline in the topology */
};

struct lpm_cfg {
	enum lpm_lookup_mode mode;
	struct pf_lrn_conf learnt;   /* `learnt:` (0 routes: none taken; stages/lpm_learnt.c) */
	uint32_t n_nh;
	struct lpm_nh_conf nh[LPM_MAX_NEXTHOPS];
	uint32_t n_routes, cap_routes;
	struct lpm_route *routes;
	char routes_file[4096];  /* resolved path, "" when none */
};

/**
 * Parse the stage's parameters (nexthops, routes, routes_file, lookup)
 * into a new struct lpm_cfg stored in sc->cfg. Every problem is recorded in
 * @p errs with its location (route file errors as file:line:col).
 * Returns 0 or -EINVAL / -ENOMEM.
 */
int lpm_cfg_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs);
void lpm_cfg_free(void *cfg);

/** The stage's parse op: lpm_cfg_parse, `learnt:`, next hops by address need the neigh edge. */
int lpm_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs);

/** The stage's neigh edge is wired (stages/lpm.c): next hops by address resolve. */
bool lpm_edit_neigh_wired(const struct pf_stage_conf *sc);

/**
 * A live route change's entry (ch->entry, copied into @p buf) split into the
 * prefix @p tok[0] and, for an add, the next hop @p tok[1] ("PREFIX NEXTHOP" or
 * "PREFIX via NEXTHOP"; NULL for a delete). Returns 0 or -EINVAL with an error.
 */
int lpm_edit_split(const struct pf_stage_conf *sc, const struct pf_change *ch,
		   char buf[PF_CHANGE_TEXT_MAX], char *tok[2], struct pf_errs *errs);

/**
 * A live delete of the route defined at @p line:@p col (of @p routes_file when
 * @p from_file, else an inline "routes" item): ch->entry becomes its key and
 * the save location is set (lpm and lpm6).
 */
void lpm_edit_del_at(const struct pf_stage_conf *sc, struct pf_change *ch, const char *routes_file,
		    bool from_file, uint32_t line, uint16_t col);

/** Live change to the parsed routes (the stage's edit op, app/control/pf_changes.h). */
int lpm_cfg_edit(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_change *ch,
		 struct pf_errs *errs);

/**
 * Read routes from the text file @p path into @p cfg (next hops already
 * known). Format: one "PREFIX/LEN NEXTHOP" per line, '#' starts a comment.
 * Returns 0 or -EINVAL (errors recorded) / -ENOMEM / -errno of fopen.
 */
int lpm_routes_file_read(struct lpm_cfg *cfg, const char *path, struct pf_errs *errs);

/**
 * One route file line for lpm_table_file_read: @p prefix as written, next
 * hop index @p nh. Returns NULL, a reason ("is not an IPv4 address"), or
 * LPM_ADD_FULL when no more routes fit.
 */
typedef const char *lpm_route_add_fn(void *arg, const char *prefix, uint32_t nh, uint32_t line,
				     uint16_t col);
extern const char lpm_add_full[];
#define LPM_ADD_FULL lpm_add_full

/**
 * The route file reader of both families: one "PREFIX/LEN NEXTHOP" per line,
 * '#' comments; next hops looked up in @p cfg, each line handed to @p add.
 * Returns 0 or -EINVAL (errors recorded) / -ENOMEM / -errno of fopen.
 */
int lpm_table_file_read(const struct lpm_cfg *cfg, const char *path, lpm_route_add_fn *add,
			void *arg, struct pf_errs *errs);

/**
 * Grow a route array of @p *cap elements of @p size bytes (1024, then
 * doubling, at most LPM_MAX_ROUTES), for both families' parsers. Returns 0,
 * -ENOSPC or -ENOMEM (the array unchanged).
 */
int lpm_routes_grow(void **routes, uint32_t *cap, size_t size);

/** The next hop named @p name, or -1. */
int lpm_nh_by_name(const struct lpm_cfg *cfg, const char *name);

/**
 * One inline route for lpm_inline_routes_walk: its `prefix` and `via`
 * (a scalar) nodes; records its own errors. Returns 0, or < 0 to stop
 * (out of memory).
 */
typedef int lpm_inline_route_fn(void *arg, const struct pf_node *prefix, const struct pf_node *via,
				const char *path, struct pf_errs *errs);

/**
 * The stage's `routes:` list, both families: each item checked for its keys
 * (`prefix`, `via`) and handed to @p fn. Returns 0, -EINVAL (errors
 * recorded) or -ENOMEM.
 */
int lpm_inline_routes_walk(const struct pf_stage_conf *sc, lpm_inline_route_fn *fn, void *arg,
			   struct pf_errs *errs);

/** Sort @p cfg's routes and report duplicate prefixes. Returns 0 or -EINVAL. */
int lpm_routes_check_dups(struct lpm_cfg *cfg, const char *topo_file, struct pf_errs *errs);

/** Next-hop names to indexes (lpm_routes.c), shared by lpm6's route file. */
#define LPM_NH_HASH_SIZE (2 * LPM_MAX_NEXTHOPS)
struct lpm_nh_index {
	uint16_t slot[LPM_NH_HASH_SIZE];   /* next-hop index + 1, 0 = empty */
};
void lpm_nh_index_build(struct lpm_nh_index *ix, const struct lpm_cfg *cfg);
/** The next hop named by @p s[0..len), or -1. */
int lpm_nh_index_find(const struct lpm_nh_index *ix, const struct lpm_cfg *cfg, const char *s,
		      size_t len);

/**
 * A next hop's `via:` for one address family: set next hop @p k's gateway
 * and port from @p v (@p port: the entry's `port:`, or -1). Returns 0 or a
 * negative value with an error in @p errs.
 */
typedef int (*lpm_nh_via_fn)(void *arg, uint32_t k, const struct pf_node *v, int port,
			     const struct pf_stage_env *env, const char *path, struct pf_errs *errs);

/**
 * Parse the stage's `nexthops:` ({name: {port, mac}} or {name: {via, port}})
 * into @p cfg. @p via parses `via:` (NULL: an IPv4 address). Returns 0 or -EINVAL.
 */
int lpm_nexthops_parse(struct lpm_cfg *cfg, const struct pf_stage_conf *sc,
		       const struct pf_stage_env *env, lpm_nh_via_fn via, void *via_arg,
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
