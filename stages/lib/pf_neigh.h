/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The neighbour table: link-layer addresses of the hosts and gateways on
 * the router's links, for ARP (IPv4) and Neighbour Discovery (IPv6,
 * RFC 4861): one table the forwarding stages read and the slow path writes,
 * owned by the neigh stage that writes it; the stages wired to it through a
 * "neigh" edge get it from the runtime (pf_stage.edge_table, the neigh
 * stage's ctl.export_table; docs/stages/neigh.md).
 *
 * Writer: one slow-path stage (neigh) on one lcore creates, updates and
 * deletes entries. Readers: the forwarding stages on any lcore, without
 * locks: rte_hash with lock-free reads (RW_CONCURRENCY_LF), an entry's
 * MAC and state published together in one 64-bit word (pf_neigh.pub,
 * atomic store / load), and a deleted entry's slot reused only after every
 * worker has passed a quiescent point (pf_rcu_start/pf_rcu_done).
 *
 * States follow Linux's neighbour table (include/net/neighbour.h): an entry
 * is INCOMPLETE while it is being resolved (requests sent, packets held),
 * REACHABLE for reachable_time after a confirmation, then STALE (still
 * used), PROBE while a used STALE entry is checked again with unicast
 * requests, FAILED when the requests went unanswered, PERMANENT for static
 * entries. Readers forward with the MAC of a REACHABLE, STALE, PROBE or
 * PERMANENT entry; the others send the packet to the slow path.
 */
#ifndef PF_NEIGH_H
#define PF_NEIGH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_hash.h>
#include <rte_spinlock.h>

#include "pf_err.h"

struct rte_mbuf;

/** Address families of a key (the numbers are the IP versions). */
#define PF_NEIGH_AF_INET 4
#define PF_NEIGH_AF_INET6 6

/** Most packets one unresolved neighbour can hold (`queue:` is 1..this). */
#define PF_NEIGH_HOLD_MAX 32

enum pf_neigh_state {
	PF_NEIGH_NONE = 0,     /**< slot free */
	PF_NEIGH_INCOMPLETE,   /**< resolving: requests out, packets held */
	PF_NEIGH_REACHABLE,    /**< confirmed within reachable_time */
	PF_NEIGH_STALE,        /**< not confirmed lately, still used */
	PF_NEIGH_PROBE,        /**< used while stale: unicast requests out */
	PF_NEIGH_FAILED,       /**< no answer to the requests */
	PF_NEIGH_PERMANENT,    /**< static, never aged */
	PF_NEIGH_STATE_MAX,
};

/** Key: family, port, address (IPv4 in addr[0..3], network order, the rest zero). */
struct pf_neigh_key {
	uint8_t af;
	uint8_t pad;
	uint16_t port;
	uint8_t addr[16];
};

/** pub word: MAC in the low 48 bits (addr_bytes[0] lowest), state in bits 48-55. */
#define PF_NEIGH_PUB(mac48, state) ((mac48) | (uint64_t)(state) << 48)
#define PF_NEIGH_PUB_STATE(pub) ((uint8_t)((pub) >> 48))

struct pf_neigh {
	/* read by the data path on any lcore */
	uint64_t pub;                 /**< MAC and state, one atomic word */
	uint8_t used;                 /**< a reader forwarded through it while STALE */
	/* the writer's (neigh stage) */
	uint8_t state;                /**< enum pf_neigh_state (pub's copy for readers) */
	uint8_t probes;               /**< requests sent in this INCOMPLETE/PROBE round */
	uint8_t n_held;
	uint8_t rel;                  /**< on the release list: 1 resolved, 2 failed */
	uint8_t rel_state;            /**< resolved: the state to publish once released */
	uint8_t in_use;
	struct pf_neigh_key key;
	uint8_t mac[6];
	uint64_t confirmed_ns;        /**< last confirmation (reply, request to us) */
	uint64_t updated_ns;          /**< last state change */
	uint64_t next_ns;             /**< next timer: retransmit, fail, age */
	uint64_t n_resolved;          /**< times resolved (info for show) */
	struct rte_mbuf *held[PF_NEIGH_HOLD_MAX];
} __rte_cache_aligned;

struct pf_neigh_table {
	struct rte_hash *h;           /**< key -> position in ents */
	struct pf_neigh *ents;        /**< by hash position */
	uint32_t size;
	uint32_t n;                   /**< entries in use (writer; read relaxed) */
	/* slots deleted, reused after a grace period */
	uint32_t n_dead;
	int32_t *dead_pos;
	uint64_t *dead_token;
	/* IPv6 gateways by id: append-only, written under gw6_lock, read without it. */
	uint8_t (*gw6)[16];
	uint32_t n_gw6;
	rte_spinlock_t gw6_lock;
};

/**
 * Create a table with room for @p size entries (the neigh stage's init) on
 * NUMA socket @p socket (SOCKET_ID_ANY: anywhere) into *@p out. Returns 0
 * or -ENOMEM with errors.
 */
int pf_neigh_table_create(struct pf_neigh_table **out, uint32_t size, int socket,
			  struct pf_errs *errs);
/** Free @p t and any packet still held (the neigh stage's free; no reader runs). NULL-safe. */
void pf_neigh_table_destroy(struct pf_neigh_table *t);

/** Fill @p k for IPv4 address @p ip (host order) on @p port. */
static inline void
pf_neigh_key_ip4(struct pf_neigh_key *k, uint16_t port, uint32_t ip)
{
	memset(k, 0, sizeof(*k));
	k->af = PF_NEIGH_AF_INET;
	k->port = port;
	k->addr[0] = (uint8_t)(ip >> 24);
	k->addr[1] = (uint8_t)(ip >> 16);
	k->addr[2] = (uint8_t)(ip >> 8);
	k->addr[3] = (uint8_t)ip;
}

/** Fill @p k for IPv6 address @p a (16 bytes, network order) on @p port. */
static inline void
pf_neigh_key_ip6(struct pf_neigh_key *k, uint16_t port, const uint8_t *a)
{
	k->af = PF_NEIGH_AF_INET6;
	k->pad = 0;
	k->port = port;
	memcpy(k->addr, a, 16);
}

/*
 * IPv6 packets lpm6 hands to the neigh stage say in pf_meta.nexthop whose
 * MAC they wait for: PF_NEIGH_ND6_DST, the packet's destination (a host on
 * a connected prefix); a gateway id from pf_neigh_gw6_id plus 1 (a next hop
 * by address, 16 bytes do not fit the metadata); PF_NEIGH_ND6_MSG, an NS or
 * NA for the neigh stage to learn from (and answer).
 */
#define PF_NEIGH_ND6_DST 0u
#define PF_NEIGH_ND6_MSG UINT32_MAX
/** IPv6 gateways a table holds (the next hops of the lpm6 stages fed to it, over all reloads). */
#define PF_NEIGH_GW6_MAX 8192

/**
 * The id of IPv6 gateway @p a in @p t (control thread: init, reload), the
 * same for the same address; -ENOSPC when the registry is full. Ids are
 * never reused, so a packet in flight across a reload still names its
 * gateway. Without a table (no neigh stage, nothing resolves) 0.
 */
int pf_neigh_gw6_id(struct pf_neigh_table *t, const uint8_t a[16]);
/** The address of gateway @p id in @p t (any lcore), or NULL (also without a table). */
const uint8_t *pf_neigh_gw6(const struct pf_neigh_table *t, uint32_t id);

/**
 * Reader: the MAC to send to @p k's neighbour, lock-free, from any lcore.
 * Returns true and fills @p mac (6 bytes) when the entry has a usable MAC;
 * false when there is no entry or it is not resolved (send the packet to
 * the slow path). Marks a STALE entry as used (the writer then probes it).
 */
static inline bool
pf_neigh_resolve(const struct pf_neigh_table *t, const struct pf_neigh_key *k, uint8_t *mac)
{
	struct pf_neigh *n;
	uint64_t pub;
	uint8_t st;
	int32_t pos;

	/* No table: no neigh stage fed, nothing resolves (the slow path decides). */
	if (unlikely(t == NULL))
		return false;
	pos = rte_hash_lookup(t->h, k);
	if (pos < 0)
		return false;
	n = &t->ents[pos];
	pub = __atomic_load_n(&n->pub, __ATOMIC_ACQUIRE);
	st = PF_NEIGH_PUB_STATE(pub);
	if (st != PF_NEIGH_REACHABLE && st != PF_NEIGH_STALE && st != PF_NEIGH_PROBE &&
	    st != PF_NEIGH_PERMANENT)
		return false;
	if (st == PF_NEIGH_STALE && __atomic_load_n(&n->used, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&n->used, 1, __ATOMIC_RELAXED);
	memcpy(mac, &pub, 6);
	return true;
}

/* ---- writer side (one stage, one lcore) ---------------------------------- */

/** The entry for @p k, or NULL. */
struct pf_neigh *pf_neigh_find(struct pf_neigh_table *t, const struct pf_neigh_key *k);
/** A new entry for @p k in state NONE (unpublished), or NULL when the table is full. */
struct pf_neigh *pf_neigh_add(struct pf_neigh_table *t, const struct pf_neigh_key *k);
/**
 * Set the entry's state (and MAC for states that carry one) and publish
 * both to the readers in one store.
 */
void pf_neigh_publish(struct pf_neigh *n, uint8_t state, const uint8_t *mac);
/** Delete an entry (nothing held); its slot is reused after a grace period. */
void pf_neigh_del(struct pf_neigh_table *t, struct pf_neigh *n);
/** Reuse the slots whose grace period ended (call now and then). */
void pf_neigh_reclaim(struct pf_neigh_table *t);
/** The entry in slot @p i (< size) if in use, else NULL (iteration, show). */
struct pf_neigh *pf_neigh_at(const struct pf_neigh_table *t, uint32_t i);
/** Names of the states, for show and logs ("reachable"). */
const char *pf_neigh_state_name(uint8_t state);

#endif /* PF_NEIGH_H */
