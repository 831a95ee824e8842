#!/usr/bin/env bash
# Writes the man page of one hcq command, hcq-CMD(1), from what the command
# itself says: its line in `hcq --help` (NAME), its usage line (SYNOPSIS)
# and the rest of `hcq CMD --help` (DESCRIPTION), so a page cannot drift
# from the command. The build makes $(B)/man/hcq-CMD.1 for the commands
# the Makefile's HCQ_COMMANDS lists.
#   scripts/hcq-man.sh HCQ_BINARY CMD > hcq-CMD.1
#   scripts/hcq-man.sh HCQ_BINARY --commands    (the commands, one a line)
set -eu
hcq=$1 cmd=$2
if [ "$cmd" = --commands ]; then
    "$hcq" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }'
    exit
fi
summary=$("$hcq" --help | awk -v c="$cmd" '$1 == c { $1 = ""; sub(/^ +/, ""); print; exit }')
[ -n "$summary" ] || { echo "hcq-man: '$cmd' is not among the commands of $hcq --help" >&2; exit 1; }
help=$("$hcq" "$cmd" --help)
usage=$(head -1 <<<"$help")
case "$usage" in "usage: hcq $cmd"*) ;; *) echo "hcq-man: hcq $cmd --help does not start with its usage" >&2; exit 1 ;; esac
# roff text: backslashes as \e, hyphens as \- (options stay unbroken), and
# \& before a line that starts with . or '
roff='function roff(s) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); if (s ~ /^[.'"'"']/) s = "\\&" s; return s }'
version=$("$hcq" --version | awk '{print $2}')
cmdu=$(tr 'a-z' 'A-Z' <<<"$cmd")
printf '.\\" hcq-%s(1), written by scripts/hcq-man.sh from `hcq %s --help` (make man)\n' "$cmd" "$cmd"
printf '.TH HCQ\\-%s 1 "" "hcq %s" "User Commands"\n' "$cmdu" "$version"
printf '.SH NAME\n'
awk "$roff"' { print "hcq\\-" c " \\- " roff($0) }' c="$cmd" <<<"$summary"
printf '.SH SYNOPSIS\n.nf\n'
awk "$roff"' { sub(/^usage: /, ""); print roff($0) }' <<<"$usage"
printf '.fi\n.SH DESCRIPTION\n'
# An option table (indented lines "  -o FILE   what it does", continued by
# deeper-indented lines) becomes .TP entries: as plain text, roff would
# refill its columns into broken lines at the reader's width. Other
# indented lines keep their line breaks.
tail -n +2 <<<"$help" | awk "$roff"'
    /^[ \t]*$/ { gap = 1; inopt = 0; next }
    /^  +-/ && match($0, /[^ ]   */) {
        line = $0; sub(/^ +/, "", line)
        if (match(line, /  +/)) { tag = substr(line, 1, RSTART - 1); desc = substr(line, RSTART + RLENGTH) }
        else { tag = line; desc = "" }
        gap = 0; printed = 1; inopt = 1
        print ".TP"; print ".B " roff(tag); if (desc != "") print roff(desc)
        next
    }
    inopt && /^    / { line = $0; sub(/^ +/, "", line); print roff(line); next }
    /^ / { if (gap && printed) print ".PP"; else if (printed) print ".br"; gap = 0; printed = 1; line = $0; sub(/^ +/, "", line); print roff(line); next }
    { if (gap && printed) print ".PP"; else if (inopt) print ".PP"; gap = 0; inopt = 0; printed = 1; print roff($0) }'
printf '.SH SEE ALSO\n.BR hcq (1)\n'
