# mod_agentshop — see README.md. `make run` serves the demo, `make test` runs every test.

APXS    ?= /usr/bin/apxs
CC      ?= cc
PORT    ?= 8080
DB      ?= var/agentshop.db

TOP     := $(CURDIR)
comma   := ,
APR_INC := $(shell apr-1-config --includes 2>/dev/null) $(shell apu-1-config --includes 2>/dev/null)
APR_CPP := $(shell apr-1-config --cppflags 2>/dev/null)
APR_LIB := $(shell apu-1-config --link-ld 2>/dev/null) $(shell apr-1-config --link-ld 2>/dev/null)
WARN    := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
OPT     ?= -O2 -g
SAN     ?=
CFLAGS  := -std=gnu11 $(OPT) $(WARN) -fPIC -fvisibility=hidden $(SAN)
CPPFLAGS := -Icore -Isql -Ibuild $(APR_CPP)
LIBS    := -ljansson -lcrypto -lm

CORE_SRC  := $(wildcard core/*.c)
CORE_OBJ  := $(patsubst core/%.c,build/core/%.o,$(CORE_SRC))
STORE_SRC := sql/as_db.c sql/as_db_orders.c sql/as_db_search.c sql/as_load.c sql/as_generate.c
STORE_OBJ := $(patsubst sql/%.c,build/sql/%.o,$(STORE_SRC))
CORE_LIB  := build/libascore.a
STORE_LIB := build/libasstore.a
MODULE    := mod_agentshop/.libs/mod_agentshop.so
CTL       := bin/agentshopctl
# Documents core serves, compiled in as C strings (scripts/embed.sh).
EMBED_INC := build/openapi_json.inc build/mcp_tools_json.inc
UNIT_SRC  := $(wildcard t/unit/*_test.c)
UNIT_BIN  := $(patsubst t/unit/%.c,build/unit/%,$(UNIT_SRC))

.PHONY: all deps deps-test run test test-unit test-apache test-asan test-pg test-scale bench install clean
.DELETE_ON_ERROR:
.SECONDARY: build/schema_sqlite.inc build/schema_pgsql.inc $(EMBED_INC)

all: deps $(MODULE) $(CTL)

deps:
	@scripts/deps.sh build

build/core build/sql build/unit var:
	@mkdir -p $@

build/core/%.o: core/%.c $(wildcard core/*.h) $(EMBED_INC) | build/core
	$(CC) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

build/openapi_json.inc: docs/openapi.json scripts/embed.sh | build/core
	scripts/embed.sh openapi_json $< > $@

build/mcp_tools_json.inc: core/mcp_tools.json scripts/embed.sh | build/core
	scripts/embed.sh mcp_tools_json $< > $@

build/schema_%.inc: sql/schema.%.sql scripts/embed.sh | build/core
	scripts/embed.sh schema_$*_sql $< > $@

build/sql/%.o: sql/%.c $(wildcard sql/*.h core/*.h) build/schema_sqlite.inc build/schema_pgsql.inc | build/sql
	$(CC) $(CFLAGS) $(CPPFLAGS) $(APR_INC) -c $< -o $@

$(CORE_LIB): $(CORE_OBJ)
	rm -f $@ && ar rcs $@ $^

$(STORE_LIB): $(STORE_OBJ)
	rm -f $@ && ar rcs $@ $^

# apxs builds the module; core and storage come in as PIC static libraries.
$(MODULE): mod_agentshop/mod_agentshop.c $(STORE_LIB) $(CORE_LIB)
	$(APXS) -c -o mod_agentshop/mod_agentshop.la \
	  -Wc,-std=gnu11 $(addprefix -Wc$(comma),$(WARN)) \
	  $(addprefix -Wc$(comma),$(SAN)) $(addprefix -Wl$(comma),$(SAN)) \
	  -I$(TOP)/core -I$(TOP)/sql mod_agentshop/mod_agentshop.c \
	  $(TOP)/$(STORE_LIB) $(TOP)/$(CORE_LIB) $(LIBS) >build/apxs.log 2>&1 \
	  || { cat build/apxs.log; exit 1; }
	@grep -E ': (warning|error):' build/apxs.log || true

$(CTL): ctl/agentshopctl.c $(STORE_LIB) $(CORE_LIB)
	@mkdir -p bin
	$(CC) $(CFLAGS) $(CPPFLAGS) $(APR_INC) -DAS_DATADIR='"$(TOP)/sql/demo"' $< \
	  $(STORE_LIB) $(CORE_LIB) $(APR_LIB) $(LIBS) -o $@

# ---- running the demo ----

run: all | var
	@scripts/run.sh "$(PORT)" "$(DB)"

# ---- tests ----

deps-test:
	@scripts/deps.sh test

build/unit/%: t/unit/%.c t/unit/fake_store.h $(CORE_LIB) | build/unit
	$(CC) $(CFLAGS) $(CPPFLAGS) $< $(CORE_LIB) -lcmocka $(LIBS) -pthread -o $@

test-unit: deps-test $(UNIT_BIN)
	@scripts/unit.sh $(UNIT_BIN)

test-apache: deps-test all
	@scripts/apache-test.sh

# Every test; the last line sums them ("total: N passed, M failed").
test: deps-test all $(UNIT_BIN)
	@scripts/test.sh $(UNIT_BIN)

SIGNING_KEY ?= $(DESTDIR)/etc/apache2/agentshop-signing.key

# The Apache::Test suite on a throwaway PostgreSQL cluster.
test-pg: all
	@scripts/deps.sh pg
	@scripts/test-pg.sh

# Search on a generated catalogue of 200,000 products: the same results from
# SQLite and from PostgreSQL (a throwaway cluster), each behind its own httpd.
test-scale: all
	@scripts/deps.sh pg
	@scripts/test-scale.sh

# Requests per second, p50 and p99 of each endpoint next to a static file from
# the same httpd, memory of its children, and an audit of the orders placed
# (docs/performance.md). Prints a table; also kept in build/bench/latest.txt.
bench: all build/bench-agents
	@scripts/deps.sh bench
	@scripts/bench.sh

build/bench-agents: bench/agents.c | build/core
	$(CC) -std=gnu11 -O2 -g $(WARN) -pthread $< -o $@

# The same suites with AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: deps-test
	@scripts/test-asan.sh

# libFuzzer harnesses over core: make fuzz (each 60 s), make fuzz-ci (20 s each
# plus the saved crash inputs); see t/fuzz/fuzz.mk.
include t/fuzz/fuzz.mk

install: all
	$(APXS) -i -n agentshop $(MODULE)
	install -D -m 0644 conf/agentshop.conf $(DESTDIR)/etc/apache2/conf-available/agentshop.conf
	install -D -m 0755 $(CTL) $(DESTDIR)/usr/local/bin/agentshopctl
	@if [ ! -s "$(SIGNING_KEY)" ]; then \
	  install -D -m 0600 /dev/null "$(SIGNING_KEY)" && \
	  od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > "$(SIGNING_KEY)" && \
	  echo "Created the confirmation signing secret $(SIGNING_KEY)"; fi

clean:
	rm -rf build bin/agentshopctl mod_agentshop/.libs mod_agentshop/*.la mod_agentshop/*.lo \
	  mod_agentshop/*.slo mod_agentshop/*.o t/TEST t/logs t/var t/htdocs/index.html \
	  t/conf/apache_test_config.pm t/conf/extra.conf t/conf/httpd.conf \
	  t/conf/modperl_inc.pl t/conf/modperl_startup.pl
