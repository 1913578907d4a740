#include "xlb_msg.h"

struct rte_ring *xlb_msg_ring_create(const char *name, int socket_id)
{
    return rte_ring_create_elem(name, sizeof(struct xlb_msg), XLB_MSG_RING_SIZE, socket_id,
                                RING_F_SP_ENQ | RING_F_SC_DEQ);
}
