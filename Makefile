# hcq build. `make` builds the static and shared library and the hcq command;
# `make test` runs every Criterion suite; `make asan` runs them again under
# ASan+UBSan. Objects go to $(B) (build/ by default, build-asan/ for asan).

PREFIX ?= /usr/local
CC ?= cc
ifeq ($(origin CC),default)
CC := cc
endif
B ?= build
OPT ?= -O2
SAN ?=
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers \
               -fPIC -pthread -g $(OPT) $(SAN) -fvisibility=hidden -Iinclude -I.
CFLAGS ?=
ALL_CFLAGS := $(CFLAGS_BASE) $(CFLAGS)
LDLIBS := -lm -ldl -lpthread
CRITERION_LIBS := -lcriterion

# Library sources, layer by layer (each calls only the ones listed before it).
LIB_DIRS := base compiler drivers drivers/cpu drivers/nv drivers/amd drivers/mock mem queue
LIB_SRC := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)

TOOL_SRC := $(wildcard tools/*.c)
TOOL_OBJ := $(TOOL_SRC:%.c=$(B)/%.o)

TEST_DIRS := tests/unit tests/mock tests/hw
TEST_SUPPORT_SRC := $(wildcard tests/support/*.c)
TEST_SUPPORT_OBJ := $(TEST_SUPPORT_SRC:%.c=$(B)/%.o)
TEST_SRC := $(foreach d,$(TEST_DIRS),$(wildcard $(d)/test_*.c))
TEST_BIN := $(TEST_SRC:%.c=$(B)/%)

BENCH_SRC := $(wildcard bench/bench_*.c)
BENCH_BIN := $(BENCH_SRC:%.c=$(B)/%)
EXAMPLE_SRC := $(wildcard examples/*.c)
EXAMPLE_BIN := $(EXAMPLE_SRC:%.c=$(B)/%)

STATIC_LIB := $(B)/libhcq.a
SHARED_LIB := $(B)/libhcq.so
HCQ_BIN := $(B)/hcq

# keep objects that only tests use (make would delete them as intermediates)
.SECONDARY:

.PHONY: all lib test test-build asan demo bench examples install clean deps check-deps
all: $(STATIC_LIB) $(SHARED_LIB) $(HCQ_BIN)
lib: $(STATIC_LIB) $(SHARED_LIB)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(STATIC_LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(SHARED_LIB): $(LIB_OBJ)
	$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,libhcq.so.0 -o $@ $^ $(LDLIBS)

$(HCQ_BIN): $(TOOL_OBJ) $(STATIC_LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $(TOOL_OBJ) $(STATIC_LIB) $(LDLIBS)

# Tests link the static library so internal (hidden) symbols are reachable.
$(B)/tests/%: tests/%.c $(TEST_SUPPORT_OBJ) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/support -MMD -MP -o $@ $< $(TEST_SUPPORT_OBJ) $(STATIC_LIB) $(CRITERION_LIBS) $(LDLIBS)

$(B)/bench/%: bench/%.c $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -o $@ $< $(STATIC_LIB) $(LDLIBS)

$(B)/examples/%: examples/%.c $(SHARED_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -o $@ $< -L$(B) -lhcq -Wl,-rpath,'$$ORIGIN/..' $(LDLIBS)

test-build: $(TEST_BIN) $(HCQ_BIN)

# Every suite runs; the run fails if any failed. HCQ_TEST_DEVICES lists the
# devices the API suites run on (scripts/run-tests.sh says how).
test: check-deps test-build
	@SAN="$(SAN)" scripts/run-tests.sh $(B) $(TEST_BIN)

asan:
	$(MAKE) B=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" test

demo: check-deps $(HCQ_BIN)
	$(HCQ_BIN) demo

bench: $(BENCH_BIN) $(HCQ_BIN)
	@for b in $(BENCH_BIN); do echo "== $$b"; $$b || exit 1; done

examples: $(EXAMPLE_BIN)

check-deps:
	@scripts/deps.sh --check || scripts/deps.sh

deps:
	scripts/deps.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/include/hcq $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/hcq/*.h $(DESTDIR)$(PREFIX)/include/hcq/
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(PREFIX)/lib/libhcq.so.0
	ln -sf libhcq.so.0 $(DESTDIR)$(PREFIX)/lib/libhcq.so
	install -m 755 $(HCQ_BIN) $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(shell sed -n 's/.*HCQ_VERSION_STRING "\(.*\)"/\1/p' include/hcq/base.h)|' \
	    scripts/hcq.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/hcq.pc

clean:
	rm -rf build build-asan build-tsan

-include $(shell find $(B) -name '*.d' 2>/dev/null)
