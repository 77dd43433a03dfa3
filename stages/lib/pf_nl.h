/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A few rtnetlink requests, for stages that set up kernel interfaces (the
 * host stage's TAPs): move a link into a network namespace, set its MAC,
 * MTU and state, add an address. Control thread only; every call waits for
 * the kernel's answer and returns 0 or -errno.
 */
#ifndef PF_NL_H
#define PF_NL_H

#include <stdbool.h>
#include <stdint.h>

/**
 * A NETLINK_ROUTE socket inside network namespace @p ns (a name under
 * /run/netns, as `ip netns add` makes; NULL or "": this process's own).
 * Returns the socket, or -errno (-ENOENT: no such namespace).
 */
int pf_nl_open(const char *ns);
void pf_nl_close(int nl);

/**
 * A socket (socket(2)'s @p domain, @p type, @p proto; close-on-exec) inside
 * network namespace @p ns (NULL or "": this process's own); a netlink
 * socket is bound. For route sources: an FPM server in the daemons'
 * namespace, a netlink listener on its routing table. Returns the socket,
 * or -errno (-ENOENT: no such namespace).
 */
int pf_nl_socket_in(const char *ns, int domain, int type, int proto);

/** An fd of namespace @p ns (/run/netns/NS), or -errno. */
int pf_nl_netns_fd(const char *ns);

/** Move link @p ifindex (in @p nl's namespace) into the namespace of @p ns_fd. */
int pf_nl_link_netns(int nl, int ifindex, int ns_fd);

/**
 * Set link @p ifindex: its MAC (@p mac, 6 bytes, or NULL), MTU (0: keep)
 * and up or down.
 */
int pf_nl_link_set(int nl, int ifindex, const uint8_t *mac, uint32_t mtu, bool up);

/** The index of link @p name in @p nl's namespace, or -errno (-ENODEV). */
int pf_nl_link_index(int nl, const char *name);

/**
 * Add address @p addr / @p plen to link @p ifindex: @p af AF_INET
 * (@p addr 4 bytes, network order; the broadcast address is set too) or
 * AF_INET6 (16 bytes, without duplicate address detection: the address is
 * the router's own, already in use on the wire).
 */
int pf_nl_addr_add(int nl, int ifindex, int af, const uint8_t *addr, uint8_t plen);

#endif /* PF_NL_H */
