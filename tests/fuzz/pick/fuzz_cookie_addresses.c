/*
 * libFuzzer target for the session cookie's address list parser. Input is untrusted bytes
 * straight from a client; the parser must never read past them, and whatever it accepts
 * must format back to text that parses to the same address (the form gRPC writes).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xlb_host_port.h"

static void check_round_trip(const struct xlb_host_port *hp)
{
    char text[XLB_HOST_PORT_STRLEN];
    int len = xlb_host_port_format(hp, text, sizeof(text));
    if (len <= 0)
        abort();
    struct xlb_host_port again;
    if (xlb_host_port_parse(text, (size_t)len, &again) != 0 || again.port != hp->port ||
        !xlb_addr_equal(&again.addr, &hp->addr))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct xlb_host_port out[XLB_HOST_PORT_LIST_MAX];
    int n = xlb_host_port_list_parse((const char *)data, size, out, XLB_HOST_PORT_LIST_MAX);
    if (n > XLB_HOST_PORT_LIST_MAX)
        abort();
    for (int i = 0; i < n; i++)
        check_round_trip(&out[i]);

    struct xlb_host_port one;
    if (xlb_host_port_parse((const char *)data, size, &one) == 0)
        check_round_trip(&one);
    return 0;
}
