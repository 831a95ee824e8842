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
