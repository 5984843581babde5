# mod_agentshop — see README.md. `make run` serves the demo, `make test` runs every test.

APXS    ?= /usr/bin/apxs
CC      ?= cc
PORT    ?= 8080
# DB: default var/agentshop.db on port 8080, var/agentshop-PORT.db on others
DB      ?=

TOP     := $(CURDIR)
comma   := ,
# Asked of apr-1-config when a recipe runs (=, not :=): on a fresh machine the
# Makefile is read before scripts/deps.sh has installed apache2-dev.
APR_INC  = $(shell apr-1-config --includes) $(shell apu-1-config --includes)
APR_CPP  = $(shell apr-1-config --cppflags)
APR_LIB  = $(shell apu-1-config --link-ld) $(shell apr-1-config --link-ld)
LIBS    := -ljansson -lcrypto -lcbor -lstemmer -lsqlite3 -lm

# ---- compiler flags ----
# The build's own flags come first and are always there; CFLAGS, CPPFLAGS and
# LDFLAGS are yours and come after them, so they add to the build's flags and
# never drop -std, -fPIC or the warnings: make CFLAGS=-O0, make CFLAGS='-O1 -g
# -fsanitize=address' LDFLAGS=-fsanitize=address, dpkg-buildflags' (debian/rules).
# The last flag wins, so yours may still turn one of ours around (-Wno-error).
#
# Standard C: core/, sql/, ctl/, the glue, the unit tests and bench/ are ISO
# C11, clean under -std=c11 -Wpedantic. Beyond ISO C they use POSIX.1-2008 (files, mmap,
# clock_gettime, pthreads, signals) plus MAP_ANONYMOUS and flock; core asks for
# them with _DEFAULT_SOURCE (glibc's switch; other libcs show them anyway), the
# code that includes APR with APR's own _GNU_SOURCE (docs/deploy.md).
#
# Unused parameters: one rule, -Wunused-parameter is on (-Wextra). A function
# that must take a parameter it does not use (a callback's, a hook's or a test
# runner's signature) says so with `(void)name;` as the first line of its body.
CFLAGS   ?= -O2 -g
STD      := -std=c11 -Wpedantic
WARN     := -Wall -Wextra -Werror -Wshadow
# Dependencies: each object's own list of the headers and embedded documents it
# includes, written by the compiler beside it (build/**/*.d).
DEPS      = -MMD -MP -MT $@ -MF $(basename $@).d
BUILD_CFLAGS = $(STD) $(WARN) -fPIC -fvisibility=hidden $(DEPS)
# The rooms of core/ (docs/architecture.md, "The rooms of core"), from the ground up. A
# room sees its own headers and those of the rooms below it, no others: each is
# compiled with just those include paths, so an include that runs back up (the
# shop including a request, a view the store, search the API) does not compile.
# Storage (sql/) sees lib, model and store (the interface it implements): no
# rule and no view. The glue, agentshopctl and the tests see all.
ROOM_lib     := lib
ROOM_model   := $(ROOM_lib) model
ROOM_rules   := $(ROOM_model) rules
ROOM_views   := $(ROOM_rules) views
ROOM_store   := $(ROOM_views) store
ROOM_search  := $(ROOM_store) search
ROOM_shop    := $(ROOM_search) shop
ROOM_http    := $(ROOM_shop) http
ROOM_answers := $(ROOM_http) answers
ROOM_mcp     := $(ROOM_answers) mcp
ROOM_api     := $(ROOM_mcp) api
ROOMS        := lib model rules views store search shop http answers mcp api
# an object's room: build/core/ROOM/x.o
room_of      = $(word 3,$(subst /, ,$(1)))
room_inc     = $(addprefix -Icore/,$(ROOM_$(call room_of,$(1))))
CORE_CPP    := $(addprefix -Icore/,$(ROOMS)) -Ibuild -D_DEFAULT_SOURCE
# the rules storage applies (ranking, verification, the feed's reader) are
# given by its caller as function pointers (as_db.rank, as_feed_rules)
STORE_CPP   := $(addprefix -Icore/,lib model store) -Isql -Ibuild
APR_CPPFLAGS = $(addprefix -Icore/,$(ROOMS)) -Isql -Ibuild $(APR_CPP) $(APR_INC)
# The flags of every compilation, kept in build/flags, which is rewritten (when
# the Makefile is read) only when they change: make CFLAGS=-O0 after a make
# compiles everything again.
BUILD_FLAGS := $(strip $(CC) $(STD) $(WARN) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS))
ifneq ($(BUILD_FLAGS),$(file <build/flags))
$(shell mkdir -p build)
$(file >build/flags,$(BUILD_FLAGS))
endif

CORE_SRC  := $(foreach r,$(ROOMS),$(wildcard core/$(r)/*.c))
CORE_OBJ  := $(patsubst core/%.c,build/core/%.o,$(CORE_SRC))
STORE_SRC := $(wildcard sql/*.c)
STORE_OBJ := $(patsubst sql/%.c,build/sql/%.o,$(STORE_SRC))
CORE_LIB  := build/libascore.a
STORE_LIB := build/libasstore.a
MODULE    := mod_agentshop/.libs/mod_agentshop.so
# the glue: every .c in mod_agentshop/, compiled and linked by apxs
MODULE_SRC := $(wildcard mod_agentshop/*.c)
CTL       := bin/agentshopctl
# agentshopctl.c and the command files beside it (ctl/ctl_*.c); agentshopctl.c
# is compiled twice, with the checkout's and with the installed default paths.
CTL_SRC   := $(wildcard ctl/*.c)
CTL_OBJ   := $(patsubst ctl/%.c,build/ctl/%.o,$(filter-out ctl/agentshopctl.c,$(CTL_SRC)))
# Documents core serves, compiled in as C arrays (scripts/embed.sh).
EMBED_INC := build/openapi_json.inc build/mcp_tools_json.inc
SCHEMA_INC := build/schema_sqlite.inc build/schema_pgsql.inc
UNIT_SRC  := $(wildcard t/unit/*_test.c)
UNIT_BIN  := $(patsubst t/unit/%.c,build/unit/%,$(UNIT_SRC))
# the one fake store: catalogue, buying tables, failure injection and checks
# (linked by the unit tests and by t/fuzz/fuzz_api.c)
FAKE_STORE_SRC := t/unit/fake_store.c t/unit/fake_shop.c t/unit/fake_faults.c
FAKE_STORE_HDR := $(FAKE_STORE_SRC:.c=.h)

.PHONY: all deps deps-test run test test-unit test-apache test-asan test-pg test-scale bench install \
        uninstall deb test-fresh test-fresh-run clean check-exports
.DELETE_ON_ERROR:
.SECONDARY: $(SCHEMA_INC) $(EMBED_INC)

all: deps $(MODULE) $(CTL)

deps:
	@scripts/deps.sh build

build/core $(addprefix build/core/,$(ROOMS)) build/sql build/ctl build/unit build/installed var: | deps
	@mkdir -p $@

# build/flags again when build/ went during this make (make clean all)
build/flags:
	$(shell mkdir -p build)$(file >$@,$(BUILD_FLAGS))

# The generated headers are made before any object is compiled (order-only);
# each object's .d then says which of them it includes.
build/core/%.o: core/%.c build/flags | $(addprefix build/core/,$(ROOMS)) $(EMBED_INC)
	$(CC) $(BUILD_CFLAGS) $(call room_inc,$@) -Ibuild -D_DEFAULT_SOURCE $(CFLAGS) $(CPPFLAGS) -c $< -o $@

build/openapi_json.inc: docs/openapi.json scripts/embed.sh | build/core
	scripts/embed.sh openapi_json $< > $@

build/mcp_tools_json.inc: core/mcp/mcp_tools.json scripts/embed.sh | build/core
	scripts/embed.sh mcp_tools_json $< > $@

build/schema_%.inc: sql/schema.%.sql scripts/embed.sh | build/core
	scripts/embed.sh schema_$*_sql $< > $@

build/sql/%.o: sql/%.c build/flags | build/sql $(SCHEMA_INC)
	$(CC) $(BUILD_CFLAGS) $(STORE_CPP) $(APR_CPP) $(APR_INC) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(CORE_LIB): $(CORE_OBJ)
	rm -f $@ && ar rcs $@ $^

$(STORE_LIB): $(STORE_OBJ)
	rm -f $@ && ar rcs $@ $^

# apxs builds the module from the glue; core and storage come in as PIC static
# libraries. Only the glue's own symbols can be exported (core and storage are
# built -fvisibility=hidden): make check-exports says it is agentshop_module
# alone. What the glue includes is listed by the compiler afterwards
# (build/module.d): apxs's libtool deletes a .d beside the objects.
$(MODULE): $(MODULE_SRC) $(STORE_LIB) $(CORE_LIB) build/flags
	$(APXS) -c -o mod_agentshop/mod_agentshop.la \
	  $(addprefix -Wc$(comma),$(STD) $(WARN) $(CFLAGS) $(CPPFLAGS)) \
	  $(addprefix -Wl$(comma),$(LDFLAGS)) \
	  $(addprefix -I$(TOP)/core/,$(ROOMS)) -I$(TOP)/sql $(MODULE_SRC) \
	  $(TOP)/$(STORE_LIB) $(TOP)/$(CORE_LIB) $(LIBS) >build/apxs.log 2>&1 \
	  || { cat build/apxs.log; exit 1; }
	@grep -E ': (warning|error):' build/apxs.log || true
	@$(CC) -MM -MP -MT $(MODULE) $(APR_CPPFLAGS) -I$$($(APXS) -q INCLUDEDIR) $(MODULE_SRC) \
	  >build/module.d

# The checkout's agentshopctl finds the demo data and its database beside
# itself (a relative default is taken from the executable's directory), so
# the checkout may move; the installed one looks in the installed places.
build/ctl/agentshopctl.o: CTL_PATHS = -DAS_DATADIR='"../sql/demo"' \
  -DAS_DEFAULT_DB='"../var/agentshop.db"' -DAS_SIGNING_KEY='"../var/signing.key"'
build/installed/agentshopctl.o: CTL_PATHS = -DAS_DATADIR='"$(DATADIR)/demo"' \
  -DAS_DEFAULT_DB='"$(STATEDIR)/agentshop.db"' -DAS_SIGNING_KEY='"$(SIGNING_KEY)"'
CTL_CC   = $(CC) $(BUILD_CFLAGS) $(APR_CPPFLAGS) $(CTL_PATHS) $(CFLAGS) $(CPPFLAGS) -c $< -o $@
CTL_LINK = $(CC) $(CFLAGS) $(LDFLAGS) $^ $(APR_LIB) $(LIBS) -o $@

build/ctl/%.o: ctl/%.c build/flags | build/ctl
	$(CTL_CC)

build/installed/agentshopctl.o: ctl/agentshopctl.c build/installed/paths build/flags \
                                | build/installed
	$(CTL_CC)

$(CTL): build/ctl/agentshopctl.o $(CTL_OBJ) $(STORE_LIB) $(CORE_LIB)
	@mkdir -p bin
	$(CTL_LINK)

build/installed/agentshopctl: build/installed/agentshopctl.o $(CTL_OBJ) $(STORE_LIB) $(CORE_LIB)
	$(CTL_LINK)

# Rewritten only when an install path changes, so that the tool is rebuilt then.
build/installed/paths: FORCE | build/installed
	@echo '$(DATADIR) $(STATEDIR) $(SIGNING_KEY)' | cmp -s - $@ || \
	  echo '$(DATADIR) $(STATEDIR) $(SIGNING_KEY)' > $@
FORCE:

# ---- running the demo ----

run: all
	@scripts/run.sh "$(PORT)" "$(DB)"

# ---- tests ----

deps-test:
	@scripts/deps.sh test

# every unit test links the one fake store (FAKE_STORE_SRC)
build/unit/%: t/unit/%.c $(FAKE_STORE_SRC) $(FAKE_STORE_HDR) $(CORE_LIB) build/flags | build/unit $(EMBED_INC)
	$(CC) $(BUILD_CFLAGS) $(CORE_CPP) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) $< $(FAKE_STORE_SRC) \
	  $(CORE_LIB) -lcmocka $(LIBS) -pthread -o $@

# The module exports agentshop_module and nothing else (nm): another exported
# name could clash with one of another module or library in httpd's process.
check-exports: $(MODULE)
	@scripts/check-exports.sh $(MODULE) agentshop_module

test-unit: deps-test check-exports $(UNIT_BIN)
	@scripts/unit.sh $(UNIT_BIN)

test-apache: deps-test all
	@scripts/apache-test.sh

# Every test; the last line sums them ("total: N passed, M failed").
test: deps-test all check-exports $(UNIT_BIN)
	@scripts/test.sh $(UNIT_BIN)

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
# the same httpd, on SQLite and PostgreSQL (BENCH_DBS; a throwaway cluster),
# the search index's size and build time, memory of its children, how soon a
# change shows in every child's search, and an audit of the orders placed;
# ends with issue 16's targets, met or missed (docs/performance.md). Prints a
# report; also kept in build/bench/latest.txt.
bench: all build/bench-agents build/bench-rate
	@scripts/deps.sh bench
	@scripts/bench.sh

build/bench-agents: bench/agents.c | build/core
	$(CC) $(STD) $(WARN) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) -pthread $< -o $@

build/bench-rate: bench/rate.c | build/core
	$(CC) $(STD) $(WARN) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) $< -o $@

# In-process A/B of two builds of the search (scripts/ab.sh, docs/performance.md):
# the driver, and this tree's core and store as one shared object for it.
build/bench-ab: bench/ab.c | build/core
	$(CC) $(STD) $(WARN) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) $< -ldl -Wl,--no-as-needed $(APR_LIB) \
	  -ljansson -o $@

build/bench-ab-search.so: bench/ab_search.c $(STORE_LIB) $(CORE_LIB)
	$(CC) $(STD) $(WARN) $(CFLAGS) $(APR_CPPFLAGS) -D_DEFAULT_SOURCE $(LDFLAGS) -fPIC -shared \
	  -fvisibility=hidden -Wl,-Bsymbolic $< -Wl,--whole-archive $(STORE_LIB) $(CORE_LIB) \
	  -Wl,--no-whole-archive $(APR_LIB) $(LIBS) -o $@

# The README's two commands on a pristine Debian 12 made with debootstrap, as
# root and as an ordinary user with sudo (scripts/test-fresh.sh; needs root).
# test-fresh-run: the make run half only (what .ci/run runs on every submission).
test-fresh:
	@scripts/test-fresh.sh

test-fresh-run:
	@FRESH=run scripts/test-fresh.sh

# The same suites with AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: deps-test
	@scripts/test-asan.sh

# libFuzzer harnesses over core: make fuzz (each 60 s), make fuzz-ci (20 s each
# plus the saved crash inputs); see t/fuzz/fuzz.mk.
include t/fuzz/fuzz.mk

# ---- installing ----
# The same places as the Debian package (make deb), the tools under PREFIX:
# the module where apxs says, agentshop.load and agentshop.conf in
# mods-available (a2enmod agentshop), the admin tool, the demo catalogue and
# the docs; then, unless DESTDIR is set, the state directory, the signing
# secret and the schema (agentshopctl setup). make uninstall takes back all
# but the data (the database and the secret); PURGE=1 removes those too.
PREFIX      ?= /usr/local
SBINDIR     ?= $(PREFIX)/sbin
DATADIR     ?= $(PREFIX)/share/agentshop
DOCDIR      ?= $(PREFIX)/share/doc/agentshop
STATEDIR    ?= /var/lib/agentshop
APACHE_ETC  ?= /etc/apache2
SIGNING_KEY ?= $(APACHE_ETC)/agentshop-signing.key
MODDIR       = $(shell $(APXS) -q LIBEXECDIR)
DOCS        := README.md docs/*.md docs/openapi.json

install: all build/installed/agentshopctl
	install -D -m 0644 $(MODULE) $(DESTDIR)$(MODDIR)/mod_agentshop.so
	install -D -m 0644 conf/agentshop.load $(DESTDIR)$(APACHE_ETC)/mods-available/agentshop.load
	install -D -m 0644 conf/agentshop.conf $(DESTDIR)$(APACHE_ETC)/mods-available/agentshop.conf
	install -D -m 0755 build/installed/agentshopctl $(DESTDIR)$(SBINDIR)/agentshopctl
	install -d $(DESTDIR)$(DATADIR)/demo $(DESTDIR)$(DOCDIR)
	install -m 0644 sql/demo/catalogue.jsonl $(DESTDIR)$(DATADIR)/demo/
	install -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)/
	@if [ -z "$(DESTDIR)" ]; then $(SBINDIR)/agentshopctl setup; fi

uninstall:
	@if [ -L $(APACHE_ETC)/mods-enabled/agentshop.load ]; then a2dismod -q agentshop; fi
	rm -f $(DESTDIR)$(MODDIR)/mod_agentshop.so \
	  $(DESTDIR)$(APACHE_ETC)/mods-available/agentshop.load \
	  $(DESTDIR)$(APACHE_ETC)/mods-available/agentshop.conf $(DESTDIR)$(SBINDIR)/agentshopctl
	rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)
	@if [ "$(PURGE)" = 1 ]; then rm -rf $(DESTDIR)$(STATEDIR) && rm -f $(DESTDIR)$(SIGNING_KEY); \
	 else echo "Kept the data: $(STATEDIR) and $(SIGNING_KEY) (make uninstall PURGE=1 removes them)"; fi

# The Debian package, built from a clean copy of the tracked tree with
# dpkg-buildpackage (debian/; the build installs through make install) and
# checked by lintian: build/libapache2-mod-agentshop_<version>_<arch>.deb.
deb:
	@scripts/deb.sh

# That package in a pristine Debian 12 root (debootstrap; needs root): install,
# enable, an order over HTTP, reinstall, purge. Ends "deb: N passed, M failed".
.PHONY: test-deb
test-deb: deb
	@scripts/test-deb.sh

clean:
	rm -rf build bin/agentshopctl mod_agentshop/.libs mod_agentshop/*.la mod_agentshop/*.lo \
	  mod_agentshop/*.slo mod_agentshop/*.o t/TEST t/logs t/var t/htdocs/index.html \
	  t/conf/apache_test_config.pm t/conf/extra.conf t/conf/httpd.conf \
	  t/conf/modperl_inc.pl t/conf/modperl_startup.pl

# what each object, program and the module include (DEPS; build/module.d)
-include $(wildcard build/core/*/*.d build/sql/*.d build/ctl/*.d \
  build/installed/*.d build/unit/*.d build/module.d)
