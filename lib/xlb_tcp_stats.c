#include "xlb_tcp_stats.h"

const struct xlb_tcp_counter_desc xlb_tcp_counter_descs[XLB_TCP_COUNTER_MAX] = {
#define XLB_TCP_COUNTER_DESC(id, field, name, family, label, value)                                \
    [XLB_TCP_C_##id] = {name, family, label, value},
    XLB_TCP_COUNTERS(XLB_TCP_COUNTER_DESC)
#undef XLB_TCP_COUNTER_DESC
};
