_ai() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="ai"
                ;;
            ai,chat)
                cmd="ai__subcmd__chat"
                ;;
            ai,completions)
                cmd="ai__subcmd__completions"
                ;;
            ai,default)
                cmd="ai__subcmd__default"
                ;;
            ai,help)
                cmd="ai__subcmd__help"
                ;;
            ai,init)
                cmd="ai__subcmd__init"
                ;;
            ai,kb)
                cmd="ai__subcmd__kb"
                ;;
            ai,list)
                cmd="ai__subcmd__list"
                ;;
            ai,mcp)
                cmd="ai__subcmd__mcp"
                ;;
            ai,prompt)
                cmd="ai__subcmd__prompt"
                ;;
            ai,reply)
                cmd="ai__subcmd__reply"
                ;;
            ai,serve)
                cmd="ai__subcmd__serve"
                ;;
            ai,usage)
                cmd="ai__subcmd__usage"
                ;;
            ai__subcmd__chat,compact)
                cmd="ai__subcmd__chat__subcmd__compact"
                ;;
            ai__subcmd__chat,delete)
                cmd="ai__subcmd__chat__subcmd__delete"
                ;;
            ai__subcmd__chat,export)
                cmd="ai__subcmd__chat__subcmd__export"
                ;;
            ai__subcmd__chat,gc)
                cmd="ai__subcmd__chat__subcmd__gc"
                ;;
            ai__subcmd__chat,help)
                cmd="ai__subcmd__chat__subcmd__help"
                ;;
            ai__subcmd__chat,import)
                cmd="ai__subcmd__chat__subcmd__import"
                ;;
            ai__subcmd__chat,list)
                cmd="ai__subcmd__chat__subcmd__list"
                ;;
            ai__subcmd__chat,new)
                cmd="ai__subcmd__chat__subcmd__new"
                ;;
            ai__subcmd__chat,rename)
                cmd="ai__subcmd__chat__subcmd__rename"
                ;;
            ai__subcmd__chat,retry)
                cmd="ai__subcmd__chat__subcmd__retry"
                ;;
            ai__subcmd__chat,search)
                cmd="ai__subcmd__chat__subcmd__search"
                ;;
            ai__subcmd__chat,show)
                cmd="ai__subcmd__chat__subcmd__show"
                ;;
            ai__subcmd__chat__subcmd__help,compact)
                cmd="ai__subcmd__chat__subcmd__help__subcmd__compact"
                ;;
            ai__subcmd__chat__subcmd__help,delete)
                cmd="ai__subcmd__chat__subcmd__help__subcmd__delete"
                ;;
            ai__subcmd__chat__subcmd__help,export)
                cmd="ai__subcmd__chat__subcmd__help__subcmd__export"
                ;;
            ai__subcmd__chat__subcmd__help,gc)
                cmd="ai__subcmd__chat__subcmd__help__subcmd__gc"
                ;;
            ai__subcmd__chat__subcmd__help,help)
                cmd="ai__subcmd__chat__subcmd__help__subcmd__help"
                ;;
            ai__subcmd__chat__subcmd__help,import)
                cmd="ai__subcmd__chat__subcmd__help__subcmd__import"
                ;;
            ai__subcmd__chat__subcmd__help,list)
                cmd="ai__subcmd__chat__subcmd__help__subcmd__list"
                ;;
            ai__subcmd__chat__subcmd__help,new)
                cmd="ai__subcmd__chat__subcmd__help__subcmd__new"
                ;;
            ai__subcmd__chat__subcmd__help,rename)
                cmd="ai__subcmd__chat__subcmd__help__subcmd__rename"
                ;;
            ai__subcmd__chat__subcmd__help,retry)
                cmd="ai__subcmd__chat__subcmd__help__subcmd__retry"
                ;;
            ai__subcmd__chat__subcmd__help,search)
                cmd="ai__subcmd__chat__subcmd__help__subcmd__search"
                ;;
            ai__subcmd__chat__subcmd__help,show)
                cmd="ai__subcmd__chat__subcmd__help__subcmd__show"
                ;;
            ai__subcmd__help,chat)
                cmd="ai__subcmd__help__subcmd__chat"
                ;;
            ai__subcmd__help,completions)
                cmd="ai__subcmd__help__subcmd__completions"
                ;;
            ai__subcmd__help,default)
                cmd="ai__subcmd__help__subcmd__default"
                ;;
            ai__subcmd__help,help)
                cmd="ai__subcmd__help__subcmd__help"
                ;;
            ai__subcmd__help,init)
                cmd="ai__subcmd__help__subcmd__init"
                ;;
            ai__subcmd__help,kb)
                cmd="ai__subcmd__help__subcmd__kb"
                ;;
            ai__subcmd__help,list)
                cmd="ai__subcmd__help__subcmd__list"
                ;;
            ai__subcmd__help,mcp)
                cmd="ai__subcmd__help__subcmd__mcp"
                ;;
            ai__subcmd__help,prompt)
                cmd="ai__subcmd__help__subcmd__prompt"
                ;;
            ai__subcmd__help,reply)
                cmd="ai__subcmd__help__subcmd__reply"
                ;;
            ai__subcmd__help,serve)
                cmd="ai__subcmd__help__subcmd__serve"
                ;;
            ai__subcmd__help,usage)
                cmd="ai__subcmd__help__subcmd__usage"
                ;;
            ai__subcmd__help__subcmd__chat,compact)
                cmd="ai__subcmd__help__subcmd__chat__subcmd__compact"
                ;;
            ai__subcmd__help__subcmd__chat,delete)
                cmd="ai__subcmd__help__subcmd__chat__subcmd__delete"
                ;;
            ai__subcmd__help__subcmd__chat,export)
                cmd="ai__subcmd__help__subcmd__chat__subcmd__export"
                ;;
            ai__subcmd__help__subcmd__chat,gc)
                cmd="ai__subcmd__help__subcmd__chat__subcmd__gc"
                ;;
            ai__subcmd__help__subcmd__chat,import)
                cmd="ai__subcmd__help__subcmd__chat__subcmd__import"
                ;;
            ai__subcmd__help__subcmd__chat,list)
                cmd="ai__subcmd__help__subcmd__chat__subcmd__list"
                ;;
            ai__subcmd__help__subcmd__chat,new)
                cmd="ai__subcmd__help__subcmd__chat__subcmd__new"
                ;;
            ai__subcmd__help__subcmd__chat,rename)
                cmd="ai__subcmd__help__subcmd__chat__subcmd__rename"
                ;;
            ai__subcmd__help__subcmd__chat,retry)
                cmd="ai__subcmd__help__subcmd__chat__subcmd__retry"
                ;;
            ai__subcmd__help__subcmd__chat,search)
                cmd="ai__subcmd__help__subcmd__chat__subcmd__search"
                ;;
            ai__subcmd__help__subcmd__chat,show)
                cmd="ai__subcmd__help__subcmd__chat__subcmd__show"
                ;;
            ai__subcmd__help__subcmd__kb,add)
                cmd="ai__subcmd__help__subcmd__kb__subcmd__add"
                ;;
            ai__subcmd__help__subcmd__kb,copy)
                cmd="ai__subcmd__help__subcmd__kb__subcmd__copy"
                ;;
            ai__subcmd__help__subcmd__kb,list)
                cmd="ai__subcmd__help__subcmd__kb__subcmd__list"
                ;;
            ai__subcmd__help__subcmd__kb,model)
                cmd="ai__subcmd__help__subcmd__kb__subcmd__model"
                ;;
            ai__subcmd__help__subcmd__kb,remove)
                cmd="ai__subcmd__help__subcmd__kb__subcmd__remove"
                ;;
            ai__subcmd__help__subcmd__kb,search)
                cmd="ai__subcmd__help__subcmd__kb__subcmd__search"
                ;;
            ai__subcmd__help__subcmd__kb,show)
                cmd="ai__subcmd__help__subcmd__kb__subcmd__show"
                ;;
            ai__subcmd__help__subcmd__kb,stats)
                cmd="ai__subcmd__help__subcmd__kb__subcmd__stats"
                ;;
            ai__subcmd__help__subcmd__kb,sync)
                cmd="ai__subcmd__help__subcmd__kb__subcmd__sync"
                ;;
            ai__subcmd__help__subcmd__kb__subcmd__model,list)
                cmd="ai__subcmd__help__subcmd__kb__subcmd__model__subcmd__list"
                ;;
            ai__subcmd__help__subcmd__kb__subcmd__model,pull)
                cmd="ai__subcmd__help__subcmd__kb__subcmd__model__subcmd__pull"
                ;;
            ai__subcmd__help__subcmd__kb__subcmd__model,remove)
                cmd="ai__subcmd__help__subcmd__kb__subcmd__model__subcmd__remove"
                ;;
            ai__subcmd__help__subcmd__prompt,add)
                cmd="ai__subcmd__help__subcmd__prompt__subcmd__add"
                ;;
            ai__subcmd__help__subcmd__prompt,edit)
                cmd="ai__subcmd__help__subcmd__prompt__subcmd__edit"
                ;;
            ai__subcmd__help__subcmd__prompt,list)
                cmd="ai__subcmd__help__subcmd__prompt__subcmd__list"
                ;;
            ai__subcmd__help__subcmd__prompt,remove)
                cmd="ai__subcmd__help__subcmd__prompt__subcmd__remove"
                ;;
            ai__subcmd__help__subcmd__prompt,show)
                cmd="ai__subcmd__help__subcmd__prompt__subcmd__show"
                ;;
            ai__subcmd__kb,add)
                cmd="ai__subcmd__kb__subcmd__add"
                ;;
            ai__subcmd__kb,copy)
                cmd="ai__subcmd__kb__subcmd__copy"
                ;;
            ai__subcmd__kb,help)
                cmd="ai__subcmd__kb__subcmd__help"
                ;;
            ai__subcmd__kb,list)
                cmd="ai__subcmd__kb__subcmd__list"
                ;;
            ai__subcmd__kb,model)
                cmd="ai__subcmd__kb__subcmd__model"
                ;;
            ai__subcmd__kb,remove)
                cmd="ai__subcmd__kb__subcmd__remove"
                ;;
            ai__subcmd__kb,search)
                cmd="ai__subcmd__kb__subcmd__search"
                ;;
            ai__subcmd__kb,show)
                cmd="ai__subcmd__kb__subcmd__show"
                ;;
            ai__subcmd__kb,stats)
                cmd="ai__subcmd__kb__subcmd__stats"
                ;;
            ai__subcmd__kb,sync)
                cmd="ai__subcmd__kb__subcmd__sync"
                ;;
            ai__subcmd__kb__subcmd__help,add)
                cmd="ai__subcmd__kb__subcmd__help__subcmd__add"
                ;;
            ai__subcmd__kb__subcmd__help,copy)
                cmd="ai__subcmd__kb__subcmd__help__subcmd__copy"
                ;;
            ai__subcmd__kb__subcmd__help,help)
                cmd="ai__subcmd__kb__subcmd__help__subcmd__help"
                ;;
            ai__subcmd__kb__subcmd__help,list)
                cmd="ai__subcmd__kb__subcmd__help__subcmd__list"
                ;;
            ai__subcmd__kb__subcmd__help,model)
                cmd="ai__subcmd__kb__subcmd__help__subcmd__model"
                ;;
            ai__subcmd__kb__subcmd__help,remove)
                cmd="ai__subcmd__kb__subcmd__help__subcmd__remove"
                ;;
            ai__subcmd__kb__subcmd__help,search)
                cmd="ai__subcmd__kb__subcmd__help__subcmd__search"
                ;;
            ai__subcmd__kb__subcmd__help,show)
                cmd="ai__subcmd__kb__subcmd__help__subcmd__show"
                ;;
            ai__subcmd__kb__subcmd__help,stats)
                cmd="ai__subcmd__kb__subcmd__help__subcmd__stats"
                ;;
            ai__subcmd__kb__subcmd__help,sync)
                cmd="ai__subcmd__kb__subcmd__help__subcmd__sync"
                ;;
            ai__subcmd__kb__subcmd__help__subcmd__model,list)
                cmd="ai__subcmd__kb__subcmd__help__subcmd__model__subcmd__list"
                ;;
            ai__subcmd__kb__subcmd__help__subcmd__model,pull)
                cmd="ai__subcmd__kb__subcmd__help__subcmd__model__subcmd__pull"
                ;;
            ai__subcmd__kb__subcmd__help__subcmd__model,remove)
                cmd="ai__subcmd__kb__subcmd__help__subcmd__model__subcmd__remove"
                ;;
            ai__subcmd__kb__subcmd__model,help)
                cmd="ai__subcmd__kb__subcmd__model__subcmd__help"
                ;;
            ai__subcmd__kb__subcmd__model,list)
                cmd="ai__subcmd__kb__subcmd__model__subcmd__list"
                ;;
            ai__subcmd__kb__subcmd__model,pull)
                cmd="ai__subcmd__kb__subcmd__model__subcmd__pull"
                ;;
            ai__subcmd__kb__subcmd__model,remove)
                cmd="ai__subcmd__kb__subcmd__model__subcmd__remove"
                ;;
            ai__subcmd__kb__subcmd__model__subcmd__help,help)
                cmd="ai__subcmd__kb__subcmd__model__subcmd__help__subcmd__help"
                ;;
            ai__subcmd__kb__subcmd__model__subcmd__help,list)
                cmd="ai__subcmd__kb__subcmd__model__subcmd__help__subcmd__list"
                ;;
            ai__subcmd__kb__subcmd__model__subcmd__help,pull)
                cmd="ai__subcmd__kb__subcmd__model__subcmd__help__subcmd__pull"
                ;;
            ai__subcmd__kb__subcmd__model__subcmd__help,remove)
                cmd="ai__subcmd__kb__subcmd__model__subcmd__help__subcmd__remove"
                ;;
            ai__subcmd__prompt,add)
                cmd="ai__subcmd__prompt__subcmd__add"
                ;;
            ai__subcmd__prompt,edit)
                cmd="ai__subcmd__prompt__subcmd__edit"
                ;;
            ai__subcmd__prompt,help)
                cmd="ai__subcmd__prompt__subcmd__help"
                ;;
            ai__subcmd__prompt,list)
                cmd="ai__subcmd__prompt__subcmd__list"
                ;;
            ai__subcmd__prompt,remove)
                cmd="ai__subcmd__prompt__subcmd__remove"
                ;;
            ai__subcmd__prompt,show)
                cmd="ai__subcmd__prompt__subcmd__show"
                ;;
            ai__subcmd__prompt__subcmd__help,add)
                cmd="ai__subcmd__prompt__subcmd__help__subcmd__add"
                ;;
            ai__subcmd__prompt__subcmd__help,edit)
                cmd="ai__subcmd__prompt__subcmd__help__subcmd__edit"
                ;;
            ai__subcmd__prompt__subcmd__help,help)
                cmd="ai__subcmd__prompt__subcmd__help__subcmd__help"
                ;;
            ai__subcmd__prompt__subcmd__help,list)
                cmd="ai__subcmd__prompt__subcmd__help__subcmd__list"
                ;;
            ai__subcmd__prompt__subcmd__help,remove)
                cmd="ai__subcmd__prompt__subcmd__help__subcmd__remove"
                ;;
            ai__subcmd__prompt__subcmd__help,show)
                cmd="ai__subcmd__prompt__subcmd__help__subcmd__show"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        ai)
            opts="-F -q -y -c -i -p -v -h -V --file --keep-attachments --dry-run --quiet --json --json-stream --yolo --cmd --run --yes --timeout --no-stdin --chat --continue --no-chat --no-wait --system --kb --no-kb --interactive --tools --data --tools-file --tool --mcp --max-tool-rounds --prompt --var --schema --help --version claude haiku sonnet opus opus-m opus-h codex codex-m codex-h codex-xh gpt codex-max codex-mini gemini pro flash pro-2.5 flash-2.5 flash-lite qwen qwen-vision ollama glm glm5 glm4 glm-air mimo olmo deepseek chimera devstral oss echo init list default completions chat reply serve usage mcp kb prompt help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -F)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tools-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tool)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mcp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-tool-rounds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --var)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -v)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat)
            opts="-F -q -y -c -i -p -v -h --file --keep-attachments --dry-run --quiet --json --json-stream --yolo --cmd --run --yes --timeout --no-stdin --chat --continue --no-chat --no-wait --system --kb --no-kb --interactive --tools --data --tools-file --tool --mcp --max-tool-rounds --prompt --var --schema --help claude haiku sonnet opus opus-m opus-h codex codex-m codex-h codex-xh gpt codex-max codex-mini gemini pro flash pro-2.5 flash-2.5 flash-lite qwen qwen-vision ollama glm glm5 glm4 glm-air mimo olmo deepseek chimera devstral oss echo list search show export import delete rename retry compact gc new help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -F)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tools-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tool)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mcp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-tool-rounds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --var)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -v)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__compact)
            opts="-q -h --keep --timeout --no-wait --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --keep)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__delete)
            opts="-q -h --no-wait --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__export)
            opts="-q -h --format --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "md json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__gc)
            opts="-q -h --older-than --dry-run --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --older-than)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__help)
            opts="list search show export import delete rename retry compact gc new help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__help__subcmd__compact)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__help__subcmd__delete)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__help__subcmd__export)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__help__subcmd__gc)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__help__subcmd__import)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__help__subcmd__new)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__help__subcmd__rename)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__help__subcmd__retry)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__help__subcmd__search)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__help__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__import)
            opts="-q -h --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__list)
            opts="-q -h --json --limit --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__new)
            opts="-q -h --system --name --quiet --help claude haiku sonnet opus opus-m opus-h codex codex-m codex-h codex-xh gpt codex-max codex-mini gemini pro flash pro-2.5 flash-2.5 flash-lite qwen qwen-vision ollama glm glm5 glm4 glm-air mimo olmo deepseek chimera devstral oss echo"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --system)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__rename)
            opts="-q -h --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__retry)
            opts="-F -q -y -c -i -p -v -h --file --keep-attachments --dry-run --quiet --json --json-stream --yolo --cmd --run --yes --timeout --no-stdin --chat --continue --no-chat --no-wait --system --kb --no-kb --interactive --tools --data --tools-file --tool --mcp --max-tool-rounds --prompt --var --schema --help claude haiku sonnet opus opus-m opus-h codex codex-m codex-h codex-xh gpt codex-max codex-mini gemini pro flash pro-2.5 flash-2.5 flash-lite qwen qwen-vision ollama glm glm5 glm4 glm-air mimo olmo deepseek chimera devstral oss echo"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -F)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tools-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tool)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mcp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-tool-rounds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --var)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -v)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__search)
            opts="-q -h --json --limit --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__chat__subcmd__show)
            opts="-q -h --json --stats --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__completions)
            opts="-q -h --quiet --help bash zsh fish powershell elvish"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__default)
            opts="-q -h --clear --quiet --help claude haiku sonnet opus opus-m opus-h codex codex-m codex-h codex-xh gpt codex-max codex-mini gemini pro flash pro-2.5 flash-2.5 flash-lite qwen qwen-vision ollama glm glm5 glm4 glm-air mimo olmo deepseek chimera devstral oss echo"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help)
            opts="init list default completions chat reply serve usage mcp kb prompt help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__chat)
            opts="list search show export import delete rename retry compact gc new"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__chat__subcmd__compact)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__chat__subcmd__delete)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__chat__subcmd__export)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__chat__subcmd__gc)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__chat__subcmd__import)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__chat__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__chat__subcmd__new)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__chat__subcmd__rename)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__chat__subcmd__retry)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__chat__subcmd__search)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__chat__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__completions)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__default)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__init)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__kb)
            opts="add sync list stats search show copy remove model"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__kb__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__kb__subcmd__copy)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__kb__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__kb__subcmd__model)
            opts="pull list remove"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__kb__subcmd__model__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__kb__subcmd__model__subcmd__pull)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__kb__subcmd__model__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__kb__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__kb__subcmd__search)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__kb__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__kb__subcmd__stats)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__kb__subcmd__sync)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__mcp)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__prompt)
            opts="add list show edit remove"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__prompt__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__prompt__subcmd__edit)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__prompt__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__prompt__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__prompt__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__reply)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__serve)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__help__subcmd__usage)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__init)
            opts="-q -h --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb)
            opts="-q -h --quiet --help add sync list stats search show copy remove model help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__add)
            opts="-q -h --embed --dimensions --include --exclude --description --store --json --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --embed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dimensions)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --include)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --description)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__copy)
            opts="-q -h --to --force --json --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help)
            opts="add sync list stats search show copy remove model help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help__subcmd__copy)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help__subcmd__model)
            opts="pull list remove"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help__subcmd__model__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help__subcmd__model__subcmd__pull)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help__subcmd__model__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help__subcmd__search)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help__subcmd__stats)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__help__subcmd__sync)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__list)
            opts="-q -h --json --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__model)
            opts="-q -h --quiet --help pull list remove help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__model__subcmd__help)
            opts="pull list remove help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__model__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__model__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__model__subcmd__help__subcmd__pull)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__model__subcmd__help__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__model__subcmd__list)
            opts="-q -h --json --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__model__subcmd__pull)
            opts="-q -h --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__model__subcmd__remove)
            opts="-q -h --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__remove)
            opts="-q -h --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__search)
            opts="-k -q -h --json --rerank --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rerank)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__show)
            opts="-q -h --json --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__stats)
            opts="-q -h --skipped --json --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__kb__subcmd__sync)
            opts="-q -h --full --json --watch --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__list)
            opts="-q -h --json --providers --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__mcp)
            opts="-q -h --kb --no-kb --models --no-ask --no-chats --timeout --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --kb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --models)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__prompt)
            opts="-q -h --quiet --help add list show edit remove help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__prompt__subcmd__add)
            opts="-q -h --system --model --description --force --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --system)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --description)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__prompt__subcmd__edit)
            opts="-q -h --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__prompt__subcmd__help)
            opts="add list show edit remove help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__prompt__subcmd__help__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__prompt__subcmd__help__subcmd__edit)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__prompt__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__prompt__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__prompt__subcmd__help__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__prompt__subcmd__help__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__prompt__subcmd__list)
            opts="-q -h --json --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__prompt__subcmd__remove)
            opts="-q -h --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__prompt__subcmd__show)
            opts="-q -h --json --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__reply)
            opts="-F -q -y -c -i -p -v -h --file --keep-attachments --dry-run --quiet --json --json-stream --yolo --cmd --run --yes --timeout --no-stdin --chat --continue --no-chat --no-wait --system --kb --no-kb --interactive --tools --data --tools-file --tool --mcp --max-tool-rounds --prompt --var --schema --help claude haiku sonnet opus opus-m opus-h codex codex-m codex-h codex-xh gpt codex-max codex-mini gemini pro flash pro-2.5 flash-2.5 flash-lite qwen qwen-vision ollama glm glm5 glm4 glm-air mimo olmo deepseek chimera devstral oss echo"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -F)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --system)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kb)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tools-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tool)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mcp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-tool-rounds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prompt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --var)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -v)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__serve)
            opts="-q -h --host --token --no-auth --max-calls --max-connections --call-timeout --idle-timeout --max-output --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --token)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-calls)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-connections)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --call-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --idle-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ai__subcmd__usage)
            opts="-q -h --since --by --json --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --since)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --by)
                    COMPREPLY=($(compgen -W "model provider day" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _ai -o nosort -o bashdefault -o default ai
else
    complete -F _ai -o bashdefault -o default ai
fi

# Aliases from your config and chat IDs, asked from `ai` itself.
_ai_dynamic() {
    _ai "$@"
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    local IFS=$'\n'
    if [[ "${prev}" == "--chat" || "${prev}" == "chat" && ${COMP_CWORD} -ge 2 \
          || ${COMP_CWORD} -eq 3 && "${COMP_WORDS[1]}" == "chat" \
             && "${prev}" =~ ^(show|delete|rename|retry)$ ]]; then
        COMPREPLY+=( $(compgen -W "$(ai __complete chats 2>/dev/null | cut -f1)" -- "${cur}") )
    elif [[ "${prev}" == "-p" || "${prev}" == "--prompt" \
            || ${COMP_CWORD} -eq 3 && "${COMP_WORDS[1]}" == "prompt" \
               && "${prev}" =~ ^(show|edit|remove)$ ]]; then
        COMPREPLY+=( $(compgen -W "$(ai __complete prompts 2>/dev/null)" -- "${cur}") )
    elif [[ ${COMP_CWORD} -eq 1 && "${cur}" != -* ]]; then
        COMPREPLY+=( $(compgen -W "$(ai __complete models 2>/dev/null)" -- "${cur}") )
    fi
}
if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _ai_dynamic -o nosort -o bashdefault -o default ai
else
    complete -F _ai_dynamic -o bashdefault -o default ai
fi
