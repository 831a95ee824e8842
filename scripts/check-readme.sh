#!/usr/bin/env bash
# Compiles the README's C example exactly as written and runs it on the CPU
# device: the README must not show code that does not work.
set -eu
B=${1:-build}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
awk '/^```c$/{on=1; next} /^```$/{if (on) exit} on' README.md > "$dir/example.c"
[ -s "$dir/example.c" ] || { echo "check-readme: no \`\`\`c block in README.md"; exit 1; }
${CC:-cc} -std=c11 -Wall -Wextra -Werror ${SAN:-} -Iinclude "$dir/example.c" "$B/libhcq.a" -lm -ldl -lpthread -o "$dir/example"
out=$(HCQ_DEVICE=CPU "$dir/example")
[ "$out" = "2 3 4 5" ] || { echo "check-readme: the example printed '$out', expected '2 3 4 5'"; exit 1; }
echo "check-readme: the README example compiles and prints: $out"
# the training snippet (the C block that calls hcq_backward) compiles, inside a function
# with a context (running it is an epoch of training: make train does that)
{
    echo '#include <hcq/hcq.h>'
    echo 'int train(hcq_ctx *ctx);'
    echo 'int train(hcq_ctx *ctx) {'
    awk '/^```c$/{on=1; buf=""; next} /^```$/{if (on && buf ~ /hcq_backward/) {printf "%s", buf; exit} on=0; next} on {buf = buf $0 "\n"}' README.md
    echo 'return 0; }'
} > "$dir/train.c"
grep -q hcq_backward "$dir/train.c" || { echo "check-readme: no training snippet (a \`\`\`c block calling hcq_backward)"; exit 1; }
${CC:-cc} -std=c11 -Wall -Wextra -Werror ${SAN:-} -Iinclude -c "$dir/train.c" -o "$dir/train.o"
echo "check-readme: the README training snippet compiles"
