# bash completion for hcq (installed as share/bash-completion/completions/hcq):
# the commands, each command's options, device names, stream formats, targets,
# and files where a command takes them.

# what this build knows (scripts/check-install.sh checks these lists against
# `hcq compile` and `hcq decode --help`)
_hcq_targets="cpu ir sm_80 sm_86 sm_87 sm_89 sm_90 sm_90a sm_100 sm_120 mock-sm_80 mock-sm_86 mock-sm_87 mock-sm_89 mock-sm_90
    gfx1100 gfx90a gfx942 gfx950 gfx1201 mock-gfx1100 mock-gfx90a mock-gfx942"
_hcq_formats="cpu nv-gpfifo nv-qmd amd-pm4 amd-sdma amd-aql hcq-names"

_hcq_devices()
{
    # the devices present, as `hcq info` would open them
    hcq test-devices 2>/dev/null | tr ' ' '\n' | grep -v '+'
}

_hcq()
{
    local cur prev cmd
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    cmd=${COMP_WORDS[1]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "info top demo decode trace bench compile --version --help" -- "$cur"))
        return
    fi
    case "$prev" in
    --device) COMPREPLY=($(compgen -W "$(_hcq_devices)" -- "$cur")); return ;;
    --format) COMPREPLY=($(compgen -W "$_hcq_formats" -- "$cur")); return ;;
    --arch) COMPREPLY=($(compgen -W "0xc6c0 0xc7c0 0xc9c0 0xcbc0 0xc6b5 0xc7b5 0xc8b5 gfx1100 gfx90a gfx942" -- "$cur")); return ;;
    --target) COMPREPLY=($(compgen -W "$_hcq_targets" -- "$cur")); return ;;
    --only) COMPREPLY=($(compgen -W "launch copy kernels" -- "$cur")); return ;;
    --cache-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    -o) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    -n|--count|-d|--interval) return ;;
    esac
    case "$cmd" in
    info) COMPREPLY=($(compgen -W "--json --no-telemetry --help $(_hcq_devices)" -- "$cur")) ;;
    top) COMPREPLY=($(compgen -W "--json -n -d --help $(_hcq_devices)" -- "$cur")) ;;
    demo) COMPREPLY=($(compgen -W "--help $(_hcq_devices)" -- "$cur")) ;;
    bench) COMPREPLY=($(compgen -W "--device --json --quick --only --vs-cuda --help" -- "$cur")) ;;
    decode)
        if [[ "$cur" == -* ]]; then
            COMPREPLY=($(compgen -W "--nv --amd --sdma --format --arch --hex --help" -- "$cur"))
        else
            COMPREPLY=($(compgen -f -- "$cur"))
        fi ;;
    compile)
        if [[ "$cur" == -* ]]; then
            COMPREPLY=($(compgen -W "--target --cache-dir -o --twins --sass --help" -- "$cur"))
        else
            COMPREPLY=($(compgen -f -- "$cur"))
        fi ;;
    trace)
        local i
        for ((i = 2; i < COMP_CWORD; i++)); do
            if [ "${COMP_WORDS[i]}" = "--" ]; then # the traced program and its arguments
                COMPREPLY=($(compgen -c -f -- "$cur"))
                return
            fi
        done
        COMPREPLY=($(compgen -W "-o --json -- --help" -- "$cur")) ;;
    esac
}
complete -F _hcq hcq
