/* Any bytes as the value of an endpoint-load-metrics-bin trailer: read or refused, never more. */
#include <stddef.h>
#include <stdint.h>

#include "xlb_orca.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct xlb_wrr_report r;
    (void)xlb_orca_read((const char *)data, size, &r);
    return 0;
}
