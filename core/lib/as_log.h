/* Logging as core's rooms see it: a level and a message handed to whoever
 * holds the log (the glue writes it to httpd's error log, agentshopctl to
 * stderr). */
#ifndef AS_LOG_H
#define AS_LOG_H

/* syslog's levels */
enum { AS_LOG_ERR = 3, AS_LOG_WARN = 4, AS_LOG_INFO = 6, AS_LOG_DEBUG = 7 };

typedef void (*as_log_fn)(void *baton, int level, const char *msg);

#endif
