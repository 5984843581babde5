# libFuzzer harnesses for core (t/fuzz/*.c). Included by the main Makefile;
# every path is relative to the top of the tree.
#
#   make fuzz-build     build build/fuzz/fuzz_{query,body,api,question,feed}
#   make fuzz           run each harness FUZZ_SECONDS (60) on its seed corpus
#   make fuzz-ci        run each for 20 s, then replay t/fuzz/regressions/*
#   make fuzz-regress   replay t/fuzz/regressions/* only
#   make fuzz-run-fuzz_api FUZZ_SECONDS=600    one harness
#
# Core's sources are compiled again here with clang and the sanitizers (not the
# gcc-built build/libascore.a), so libFuzzer sees core's coverage; so is the
# unit tests' fake store (FAKE_STORE_SRC, the Makefile), which fuzz_api runs
# against (without cmocka). New inputs a
# run finds go to build/fuzz/corpus/<harness>/ (the seeds under
# t/fuzz/corpus/ stay as they are); a crash, leak or hang is written to
# build/fuzz/artifacts/<harness>/: move the input to t/fuzz/regressions/<harness>/
# so fuzz-ci replays it from then on.

FUZZ_CC        ?= clang
FUZZ_SECONDS   ?= 60
FUZZ_CI_SECONDS ?= 20
FUZZ_MAX_LEN   ?= 4096
# the C of the main build (Makefile, STD and CORE_CPP)
FUZZ_CFLAGS    := -std=c11 -Wpedantic -g -O1 -fsanitize=fuzzer,address,undefined \
                  -fno-sanitize-recover=undefined -fno-omit-frame-pointer -Wall -Wextra
FUZZ_CPPFLAGS  := $(addprefix -Icore/,$(ROOMS)) -Ibuild -It/unit -It/fuzz -D_DEFAULT_SOURCE
FUZZ_LIBS      := -ljansson -lcrypto -lcbor -lstemmer -lm
FUZZ_HARNESSES := fuzz_query fuzz_body fuzz_api fuzz_question fuzz_feed
FUZZ_BINS      := $(addprefix build/fuzz/,$(FUZZ_HARNESSES))
FUZZ_CORE_SRC  := $(CORE_SRC)
FUZZ_CORE_OBJ  := $(patsubst core/%.c,build/fuzz/core/%.o,$(FUZZ_CORE_SRC))
FUZZ_HEADERS   := $(foreach r,$(ROOMS),$(wildcard core/$(r)/*.h)) $(wildcard t/fuzz/*.h) $(FAKE_STORE_HDR)
FUZZ_FAKE_OBJ  := $(patsubst t/unit/%.c,build/fuzz/fake/%.o,$(FAKE_STORE_SRC))
# what a harness links besides core: fuzz_api the fake store
FUZZ_LINK_fuzz_api := $(FUZZ_FAKE_OBJ)
# libFuzzer options for every run: the seeds' size limit, a hang is >10 s for
# one input, leaks are reported (ASan's LeakSanitizer, on by default).
FUZZ_RUN_OPTS  := -max_len=$(FUZZ_MAX_LEN) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
FUZZ_ENV       := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
                  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: fuzz-deps fuzz-build fuzz fuzz-ci fuzz-regress $(addprefix fuzz-run-,$(FUZZ_HARNESSES)) \
        $(addprefix fuzz-ci-run-,$(FUZZ_HARNESSES)) $(addprefix fuzz-regress-,$(FUZZ_HARNESSES))

# the core and fake store objects are intermediate files of the pattern rules: keep them
.SECONDARY: $(FUZZ_CORE_OBJ) $(FUZZ_FAKE_OBJ)

fuzz-deps:
	@t/fuzz/deps.sh

$(addprefix build/fuzz/core/,$(ROOMS)) build/fuzz/fake:
	@mkdir -p $@

# fuzz-deps is order-only: it runs first but never forces a rebuild. Each
# object depends on the headers it includes (-MMD, build/fuzz/core/**/*.d).
build/fuzz/core/%.o: core/%.c | $(addprefix build/fuzz/core/,$(ROOMS)) fuzz-deps $(EMBED_INC)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_CPPFLAGS) -MMD -MP -c $< -o $@

build/fuzz/fake/%.o: t/unit/%.c | build/fuzz/fake fuzz-deps $(EMBED_INC)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_CPPFLAGS) -MMD -MP -c $< -o $@

-include $(wildcard build/fuzz/core/*/*.d build/fuzz/fake/*.d)

build/fuzz/fuzz_api: $(FUZZ_FAKE_OBJ)

build/fuzz/%: t/fuzz/%.c $(FUZZ_HEADERS) $(FUZZ_CORE_OBJ) | fuzz-deps
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_CPPFLAGS) $< $(FUZZ_CORE_OBJ) $(FUZZ_LINK_$*) $(FUZZ_LIBS) -o $@

fuzz-build: $(FUZZ_BINS)

# One harness: $(1) name, $(2) seconds.
define fuzz_run
	@mkdir -p build/fuzz/corpus/$(1) build/fuzz/artifacts/$(1)
	@echo "== $(1): $(2) s"
	@$(FUZZ_ENV) build/fuzz/$(1) build/fuzz/corpus/$(1) t/fuzz/corpus/$(1) \
	  $(if $(wildcard t/fuzz/$(1).dict),-dict=t/fuzz/$(1).dict) $(FUZZ_RUN_OPTS) \
	  -max_total_time=$(2) -artifact_prefix=build/fuzz/artifacts/$(1)/ \
	  >build/fuzz/run-$(1).log 2>&1 \
	  && grep -a -E '^Done|^stat::(number_of_executed_units|peak_rss)' build/fuzz/run-$(1).log \
	  || { tail -n 60 build/fuzz/run-$(1).log; echo "fuzz: $(1) failed (log: build/fuzz/run-$(1).log)"; exit 1; }
endef

# Replays the saved crash inputs of harness $(1) (every file but .keep), each
# on its own so one failure does not hide the others; fails if any fails. One
# shell command, so fuzz-ci can chain them.
fuzz_regress_cmd = { files="$(wildcard t/fuzz/regressions/$(1)/*)"; bad=0; \
  echo "== $(1): replaying $$(echo $$files | wc -w) regression input(s)"; \
  for f in $$files; do \
    $(FUZZ_ENV) build/fuzz/$(1) $$f >build/fuzz/regress-$(1).log 2>&1 \
      && echo "   ok    $$f" \
      || { bad=1; echo "   FAIL  $$f"; grep -a -m3 -E 'invariant|ERROR|runtime error|SUMMARY' build/fuzz/regress-$(1).log | sed 's/^/         /'; }; \
  done; [ $$bad = 0 ]; }

$(addprefix fuzz-run-,$(FUZZ_HARNESSES)): fuzz-run-%: fuzz-build
	$(call fuzz_run,$*,$(FUZZ_SECONDS))

$(addprefix fuzz-ci-run-,$(FUZZ_HARNESSES)): fuzz-ci-run-%: fuzz-build
	$(call fuzz_run,$*,$(FUZZ_CI_SECONDS))

fuzz: $(addprefix fuzz-run-,$(FUZZ_HARNESSES))

$(addprefix fuzz-regress-,$(FUZZ_HARNESSES)): fuzz-regress-%: fuzz-build
	@$(call fuzz_regress_cmd,$*)

fuzz-regress: $(addprefix fuzz-regress-,$(FUZZ_HARNESSES))

# The regressions are replayed after the timed runs, every harness's even when
# one fails; the target fails if any did.
fuzz-ci: $(addprefix fuzz-ci-run-,$(FUZZ_HARNESSES))
	@rc=0; $(foreach h,$(FUZZ_HARNESSES),$(call fuzz_regress_cmd,$(h)) || rc=1;) exit $$rc
