/* IPv4 and IPv6 addresses and prefixes, in one family-tagged form both planes share. */
#ifndef XLB_ADDR_H
#define XLB_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XLB_ADDR_STRLEN 48 /* "ffff:...:ffff" plus room for a "/128" suffix */

/* An address usable as a hash key: zeroed padding, IPv4 in the first four bytes. */
struct xlb_addr {
    uint8_t family; /* AF_INET or AF_INET6 */
    uint8_t pad[3];
    uint8_t bytes[16];
};

struct xlb_prefix {
    struct xlb_addr addr;
    uint8_t len;
};

/* Parse a literal address; returns 0, or -1 when it is neither IPv4 nor IPv6. */
int xlb_addr_parse(const char *text, struct xlb_addr *out);

/* Parse "address/len"; the address part must be an xlb_addr literal and len within the family. */
int xlb_prefix_parse(const char *text, struct xlb_prefix *out);

void xlb_addr_from_ipv4(uint32_t be_addr, struct xlb_addr *out);
void xlb_addr_from_ipv6(const uint8_t bytes[16], struct xlb_addr *out);

bool xlb_addr_equal(const struct xlb_addr *a, const struct xlb_addr *b);
bool xlb_prefix_contains(const struct xlb_prefix *prefix, const struct xlb_addr *addr);

/* Write the address as text; returns buf. */
const char *xlb_addr_format(const struct xlb_addr *addr, char *buf, size_t len);

static inline uint32_t xlb_addr_ipv4(const struct xlb_addr *addr)
{
    uint32_t be;
    __builtin_memcpy(&be, addr->bytes, 4);
    return be;
}

#endif
