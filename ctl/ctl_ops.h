/* The operator's daily commands of bin/agentshopctl (docs/deploy.md, "Daily
 * operations"): lists as JSON Lines for scripts, one object for a show or a
 * change. Each takes the whole command line (argv[0] the command) and
 * returns the exit code. */
#ifndef CTL_OPS_H
#define CTL_OPS_H

#include "ctl_common.h"

int ctl_order_list(const opts *o, apr_pool_t *p);   /* order list [--status S] [--since T] */
int ctl_order_show(const opts *o, apr_pool_t *p);   /* order show ID */
int ctl_return(const opts *o, apr_pool_t *p);       /* return list [--status S] [--since T] */
int ctl_offer(const opts *o, apr_pool_t *p);        /* offer set ID [--price-eur X] [--stock N] */
int ctl_mandate_show(const opts *o, apr_pool_t *p); /* mandate show ID */
int ctl_user_list(const opts *o, apr_pool_t *p);    /* user list */

#endif
