# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_ai_global_optspecs
    string join \n F/file= keep-attachments dry-run q/quiet json json-stream yolo cmd run y/yes timeout= no-stdin chat= c/continue no-chat no-wait system= kb= no-kb i/interactive tools data= tools-file= tool= mcp= max-tool-rounds= p/prompt= v/var= schema= h/help V/version
end

function __fish_ai_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_ai_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_ai_using_subcommand
    set -l cmd (__fish_ai_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c ai -n "__fish_ai_needs_command" -s F -l file -d 'Send files as context: a file, or a folder\'s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)' -r -F
complete -c ai -n "__fish_ai_needs_command" -l timeout -d 'Stop the backend after this many seconds (default: config "timeout", else 1200)' -r
complete -c ai -n "__fish_ai_needs_command" -l chat -d 'Continue chat ID (or start a chat with this name: letters, digits, - and _)' -r
complete -c ai -n "__fish_ai_needs_command" -l system -d 'System prompt of a new chat (default: config "chat.system")' -r
complete -c ai -n "__fish_ai_needs_command" -l kb -d 'Ground the answer in a knowledge base (repeat for several); a chat remembers them' -r
complete -c ai -n "__fish_ai_needs_command" -l data -d 'A JSON document the model can query with tools (repeat: primary, secondary)' -r -F
complete -c ai -n "__fish_ai_needs_command" -l tools-file -d 'Domain tools over the --data documents, declared in a JSON file' -r -F
complete -c ai -n "__fish_ai_needs_command" -l tool -d 'Offer a command tool of config "tools.commands" (repeat); each run is asked for' -r
complete -c ai -n "__fish_ai_needs_command" -l mcp -d 'Start an MCP server of config "mcp.servers" for this call and offer its tools (repeat)' -r
complete -c ai -n "__fish_ai_needs_command" -l max-tool-rounds -d 'Tool rounds per turn, at most (default: config "tools.max_rounds", else 10)' -r
complete -c ai -n "__fish_ai_needs_command" -s p -l prompt -d 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}' -r
complete -c ai -n "__fish_ai_needs_command" -s v -l var -d 'A variable of the saved prompt (repeat): -v lang=German' -r
complete -c ai -n "__fish_ai_needs_command" -l schema -d 'The reply is JSON that fits this schema: a file, \'{json schema}\', or \'name str, age int, tags [str]\'. Checked, asked again once, else exit 1' -r
complete -c ai -n "__fish_ai_needs_command" -l keep-attachments -d 'Keep a copy of each attached image or PDF in the chat\'s folder (otherwise the chat records only its name, type, size and SHA-256)'
complete -c ai -n "__fish_ai_needs_command" -l dry-run -d 'Print the exact program, arguments and prompt that would run; run nothing'
complete -c ai -n "__fish_ai_needs_command" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_needs_command" -l json -d 'Print one JSON object (reply, model, provider, timing) instead of the raw reply'
complete -c ai -n "__fish_ai_needs_command" -l json-stream -d 'JSON lines on stdout as the reply streams (for programs such as `ai serve`)'
complete -c ai -n "__fish_ai_needs_command" -l yolo -d 'Let the backend act without asking (each CLI\'s auto-approve flag)'
complete -c ai -n "__fish_ai_needs_command" -l cmd -d 'The reply is one shell command for this system, printed bare'
complete -c ai -n "__fish_ai_needs_command" -l run -d 'Like --cmd, then show it, ask, and run it with your shell (exit with its code)'
complete -c ai -n "__fish_ai_needs_command" -s y -l yes -d 'With run: do not ask before running the command'
complete -c ai -n "__fish_ai_needs_command" -l no-stdin -d 'Do not read standard input, even when it is not a terminal'
complete -c ai -n "__fish_ai_needs_command" -s c -l continue -d 'Continue the most recently used chat, as `ai reply` does'
complete -c ai -n "__fish_ai_needs_command" -l no-chat -d 'Do not save this prompt as a chat'
complete -c ai -n "__fish_ai_needs_command" -l no-wait -d 'Fail at once (exit 75) when the chat is in use by another call, instead of waiting'
complete -c ai -n "__fish_ai_needs_command" -l no-kb -d 'No knowledge base for this call (not the chat\'s, nor config "kb.default")'
complete -c ai -n "__fish_ai_needs_command" -s i -l interactive -d 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)'
complete -c ai -n "__fish_ai_needs_command" -l tools -d 'Let the model search the knowledge bases itself, with tools (HTTP providers)'
complete -c ai -n "__fish_ai_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ai -n "__fish_ai_needs_command" -s V -l version -d 'Print version'
complete -c ai -n "__fish_ai_needs_command" -a "init" -d 'Detect installed backend CLIs and local Ollama models; write the config'
complete -c ai -n "__fish_ai_needs_command" -a "list" -d 'Show every alias by provider, and whether it can be used now'
complete -c ai -n "__fish_ai_needs_command" -a "default" -d 'Show, set or clear the model used when a call names none'
complete -c ai -n "__fish_ai_needs_command" -a "completions" -d 'Print a shell completion script (completes aliases too)'
complete -c ai -n "__fish_ai_needs_command" -a "chat" -d 'Continue a chat (`ai chat ID [MODEL] "prompt"`), start one, or manage them'
complete -c ai -n "__fish_ai_needs_command" -a "reply" -d 'Continue the most recently used chat'
complete -c ai -n "__fish_ai_needs_command" -a "serve" -d 'Serve the HTTP API for models, calls and chats on 127.0.0.1'
complete -c ai -n "__fish_ai_needs_command" -a "usage" -d 'Tokens and cost of past replies, from what the chats record (estimated where the backend reported none, and marked so)'
complete -c ai -n "__fish_ai_needs_command" -a "mcp" -d 'Serve your notes, chats and models to an agent as MCP tools (stdin/stdout)'
complete -c ai -n "__fish_ai_needs_command" -a "kb" -d 'Knowledge bases: index a folder of notes, search it, ground answers in it (--kb NAME)'
complete -c ai -n "__fish_ai_needs_command" -a "prompt" -d 'Saved prompts: add, list, show, edit, remove; use one with -p NAME'
complete -c ai -n "__fish_ai_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ai -n "__fish_ai_using_subcommand init" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand init" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand list" -l json -d 'Print JSON instead of a table'
complete -c ai -n "__fish_ai_using_subcommand list" -l providers -d 'Only the providers (every CLI and HTTP API, with or without an alias)'
complete -c ai -n "__fish_ai_using_subcommand list" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand list" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand default" -l clear -d 'Remove the default'
complete -c ai -n "__fish_ai_using_subcommand default" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand default" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand completions" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand completions" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -s F -l file -d 'Send files as context: a file, or a folder\'s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)' -r -F
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l timeout -d 'Stop the backend after this many seconds (default: config "timeout", else 1200)' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l chat -d 'Continue chat ID (or start a chat with this name: letters, digits, - and _)' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l system -d 'System prompt of a new chat (default: config "chat.system")' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l kb -d 'Ground the answer in a knowledge base (repeat for several); a chat remembers them' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l data -d 'A JSON document the model can query with tools (repeat: primary, secondary)' -r -F
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l tools-file -d 'Domain tools over the --data documents, declared in a JSON file' -r -F
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l tool -d 'Offer a command tool of config "tools.commands" (repeat); each run is asked for' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l mcp -d 'Start an MCP server of config "mcp.servers" for this call and offer its tools (repeat)' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l max-tool-rounds -d 'Tool rounds per turn, at most (default: config "tools.max_rounds", else 10)' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -s p -l prompt -d 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -s v -l var -d 'A variable of the saved prompt (repeat): -v lang=German' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l schema -d 'The reply is JSON that fits this schema: a file, \'{json schema}\', or \'name str, age int, tags [str]\'. Checked, asked again once, else exit 1' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l keep-attachments -d 'Keep a copy of each attached image or PDF in the chat\'s folder (otherwise the chat records only its name, type, size and SHA-256)'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l dry-run -d 'Print the exact program, arguments and prompt that would run; run nothing'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l json -d 'Print one JSON object (reply, model, provider, timing) instead of the raw reply'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l json-stream -d 'JSON lines on stdout as the reply streams (for programs such as `ai serve`)'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l yolo -d 'Let the backend act without asking (each CLI\'s auto-approve flag)'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l cmd -d 'The reply is one shell command for this system, printed bare'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l run -d 'Like --cmd, then show it, ask, and run it with your shell (exit with its code)'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -s y -l yes -d 'With run: do not ask before running the command'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l no-stdin -d 'Do not read standard input, even when it is not a terminal'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -s c -l continue -d 'Continue the most recently used chat, as `ai reply` does'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l no-chat -d 'Do not save this prompt as a chat'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l no-wait -d 'Fail at once (exit 75) when the chat is in use by another call, instead of waiting'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l no-kb -d 'No knowledge base for this call (not the chat\'s, nor config "kb.default")'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -s i -l interactive -d 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -l tools -d 'Let the model search the knowledge bases itself, with tools (HTTP providers)'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -a "list" -d 'List chats, most recently used first'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -a "search" -d 'Find chats by their words: every word, in any order and any case, in the title or the messages. Most recently used first'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -a "show" -d 'Show a chat\'s messages'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -a "export" -d 'Print a chat as Markdown or JSON (both import back unchanged)'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -a "import" -d 'Create a chat from an export (FILE, or - for standard input); prints its ID'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -a "delete" -d 'Delete chats (waits for a turn in progress on them)'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -a "rename" -d 'Give a chat a title'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -a "retry" -d 'Resend the prompt of a turn that failed'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -a "compact" -d 'Summarize all but the newest exchanges with the chat\'s own model; the summary is sent in their place from then on (the messages stay on disk)'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -a "gc" -d 'Delete chats not used for a while'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -a "new" -d 'Create an empty chat and print its ID (for scripts)'
complete -c ai -n "__fish_ai_using_subcommand chat; and not __fish_seen_subcommand_from list search show export import delete rename retry compact gc new help" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from list" -l limit -d 'Show at most N chats (0: all)' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from list" -l json -d 'Print JSON instead of a table'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from search" -l limit -d 'Show at most N chats (0: all)' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from search" -l json -d 'Print JSON instead of text'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from search" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from search" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from show" -l json -d 'Print JSON instead of text'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from show" -l stats -d 'Counts instead of messages: messages, estimated tokens, reported usage, models'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from export" -l format -r -f -a "md\t''
json\t''"
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from export" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from import" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from delete" -l no-wait -d 'Fail at once when a chat is in use'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from delete" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from delete" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from rename" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from rename" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -s F -l file -d 'Send files as context: a file, or a folder\'s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)' -r -F
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l timeout -d 'Stop the backend after this many seconds (default: config "timeout", else 1200)' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l chat -d 'Continue chat ID (or start a chat with this name: letters, digits, - and _)' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l system -d 'System prompt of a new chat (default: config "chat.system")' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l kb -d 'Ground the answer in a knowledge base (repeat for several); a chat remembers them' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l data -d 'A JSON document the model can query with tools (repeat: primary, secondary)' -r -F
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l tools-file -d 'Domain tools over the --data documents, declared in a JSON file' -r -F
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l tool -d 'Offer a command tool of config "tools.commands" (repeat); each run is asked for' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l mcp -d 'Start an MCP server of config "mcp.servers" for this call and offer its tools (repeat)' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l max-tool-rounds -d 'Tool rounds per turn, at most (default: config "tools.max_rounds", else 10)' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -s p -l prompt -d 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -s v -l var -d 'A variable of the saved prompt (repeat): -v lang=German' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l schema -d 'The reply is JSON that fits this schema: a file, \'{json schema}\', or \'name str, age int, tags [str]\'. Checked, asked again once, else exit 1' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l keep-attachments -d 'Keep a copy of each attached image or PDF in the chat\'s folder (otherwise the chat records only its name, type, size and SHA-256)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l dry-run -d 'Print the exact program, arguments and prompt that would run; run nothing'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l json -d 'Print one JSON object (reply, model, provider, timing) instead of the raw reply'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l json-stream -d 'JSON lines on stdout as the reply streams (for programs such as `ai serve`)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l yolo -d 'Let the backend act without asking (each CLI\'s auto-approve flag)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l cmd -d 'The reply is one shell command for this system, printed bare'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l run -d 'Like --cmd, then show it, ask, and run it with your shell (exit with its code)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -s y -l yes -d 'With run: do not ask before running the command'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l no-stdin -d 'Do not read standard input, even when it is not a terminal'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -s c -l continue -d 'Continue the most recently used chat, as `ai reply` does'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l no-chat -d 'Do not save this prompt as a chat'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l no-wait -d 'Fail at once (exit 75) when the chat is in use by another call, instead of waiting'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l no-kb -d 'No knowledge base for this call (not the chat\'s, nor config "kb.default")'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -s i -l interactive -d 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -l tools -d 'Let the model search the knowledge bases itself, with tools (HTTP providers)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from retry" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from compact" -l keep -d 'Exchanges to keep as they are' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from compact" -l timeout -d 'Stop the backend after this many seconds' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from compact" -l no-wait -d 'Fail at once when the chat is in use'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from compact" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from compact" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from gc" -l older-than -d 'Age: a number and s, m, h, d or w (e.g. 30d)' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from gc" -l dry-run -d 'Only print what would be deleted'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from gc" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from gc" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from new" -l system -d 'The chat\'s system prompt' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from new" -l name -d 'A name instead of a generated ID' -r
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from new" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from new" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from help" -f -a "list" -d 'List chats, most recently used first'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from help" -f -a "search" -d 'Find chats by their words: every word, in any order and any case, in the title or the messages. Most recently used first'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show a chat\'s messages'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from help" -f -a "export" -d 'Print a chat as Markdown or JSON (both import back unchanged)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from help" -f -a "import" -d 'Create a chat from an export (FILE, or - for standard input); prints its ID'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from help" -f -a "delete" -d 'Delete chats (waits for a turn in progress on them)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from help" -f -a "rename" -d 'Give a chat a title'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from help" -f -a "retry" -d 'Resend the prompt of a turn that failed'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from help" -f -a "compact" -d 'Summarize all but the newest exchanges with the chat\'s own model; the summary is sent in their place from then on (the messages stay on disk)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from help" -f -a "gc" -d 'Delete chats not used for a while'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from help" -f -a "new" -d 'Create an empty chat and print its ID (for scripts)'
complete -c ai -n "__fish_ai_using_subcommand chat; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ai -n "__fish_ai_using_subcommand reply" -s F -l file -d 'Send files as context: a file, or a folder\'s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)' -r -F
complete -c ai -n "__fish_ai_using_subcommand reply" -l timeout -d 'Stop the backend after this many seconds (default: config "timeout", else 1200)' -r
complete -c ai -n "__fish_ai_using_subcommand reply" -l chat -d 'Continue chat ID (or start a chat with this name: letters, digits, - and _)' -r
complete -c ai -n "__fish_ai_using_subcommand reply" -l system -d 'System prompt of a new chat (default: config "chat.system")' -r
complete -c ai -n "__fish_ai_using_subcommand reply" -l kb -d 'Ground the answer in a knowledge base (repeat for several); a chat remembers them' -r
complete -c ai -n "__fish_ai_using_subcommand reply" -l data -d 'A JSON document the model can query with tools (repeat: primary, secondary)' -r -F
complete -c ai -n "__fish_ai_using_subcommand reply" -l tools-file -d 'Domain tools over the --data documents, declared in a JSON file' -r -F
complete -c ai -n "__fish_ai_using_subcommand reply" -l tool -d 'Offer a command tool of config "tools.commands" (repeat); each run is asked for' -r
complete -c ai -n "__fish_ai_using_subcommand reply" -l mcp -d 'Start an MCP server of config "mcp.servers" for this call and offer its tools (repeat)' -r
complete -c ai -n "__fish_ai_using_subcommand reply" -l max-tool-rounds -d 'Tool rounds per turn, at most (default: config "tools.max_rounds", else 10)' -r
complete -c ai -n "__fish_ai_using_subcommand reply" -s p -l prompt -d 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}' -r
complete -c ai -n "__fish_ai_using_subcommand reply" -s v -l var -d 'A variable of the saved prompt (repeat): -v lang=German' -r
complete -c ai -n "__fish_ai_using_subcommand reply" -l schema -d 'The reply is JSON that fits this schema: a file, \'{json schema}\', or \'name str, age int, tags [str]\'. Checked, asked again once, else exit 1' -r
complete -c ai -n "__fish_ai_using_subcommand reply" -l keep-attachments -d 'Keep a copy of each attached image or PDF in the chat\'s folder (otherwise the chat records only its name, type, size and SHA-256)'
complete -c ai -n "__fish_ai_using_subcommand reply" -l dry-run -d 'Print the exact program, arguments and prompt that would run; run nothing'
complete -c ai -n "__fish_ai_using_subcommand reply" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand reply" -l json -d 'Print one JSON object (reply, model, provider, timing) instead of the raw reply'
complete -c ai -n "__fish_ai_using_subcommand reply" -l json-stream -d 'JSON lines on stdout as the reply streams (for programs such as `ai serve`)'
complete -c ai -n "__fish_ai_using_subcommand reply" -l yolo -d 'Let the backend act without asking (each CLI\'s auto-approve flag)'
complete -c ai -n "__fish_ai_using_subcommand reply" -l cmd -d 'The reply is one shell command for this system, printed bare'
complete -c ai -n "__fish_ai_using_subcommand reply" -l run -d 'Like --cmd, then show it, ask, and run it with your shell (exit with its code)'
complete -c ai -n "__fish_ai_using_subcommand reply" -s y -l yes -d 'With run: do not ask before running the command'
complete -c ai -n "__fish_ai_using_subcommand reply" -l no-stdin -d 'Do not read standard input, even when it is not a terminal'
complete -c ai -n "__fish_ai_using_subcommand reply" -s c -l continue -d 'Continue the most recently used chat, as `ai reply` does'
complete -c ai -n "__fish_ai_using_subcommand reply" -l no-chat -d 'Do not save this prompt as a chat'
complete -c ai -n "__fish_ai_using_subcommand reply" -l no-wait -d 'Fail at once (exit 75) when the chat is in use by another call, instead of waiting'
complete -c ai -n "__fish_ai_using_subcommand reply" -l no-kb -d 'No knowledge base for this call (not the chat\'s, nor config "kb.default")'
complete -c ai -n "__fish_ai_using_subcommand reply" -s i -l interactive -d 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)'
complete -c ai -n "__fish_ai_using_subcommand reply" -l tools -d 'Let the model search the knowledge bases itself, with tools (HTTP providers)'
complete -c ai -n "__fish_ai_using_subcommand reply" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand serve" -l host -d 'Address to listen on' -r
complete -c ai -n "__fish_ai_using_subcommand serve" -l token -d 'The bearer token clients must send, 16 characters or more (default: AI_CLI_SERVER_TOKEN, else a new one, printed at start)' -r
complete -c ai -n "__fish_ai_using_subcommand serve" -l max-calls -d 'Model calls run at once; more are answered 429 with Retry-After' -r
complete -c ai -n "__fish_ai_using_subcommand serve" -l max-connections -d 'Open connections at once; more are answered 503 and closed' -r
complete -c ai -n "__fish_ai_using_subcommand serve" -l call-timeout -d 'Stop a call (as Ctrl+C would, keeping its partial reply) after this many seconds' -r
complete -c ai -n "__fish_ai_using_subcommand serve" -l idle-timeout -d 'Close a connection whose request has not fully arrived after this many seconds' -r
complete -c ai -n "__fish_ai_using_subcommand serve" -l max-output -d 'The most output of one `ai` child kept in memory (one line of it, or a whole list); beyond it the child is stopped and the call fails with 502' -r
complete -c ai -n "__fish_ai_using_subcommand serve" -l no-auth -d 'Require no token (loopback only)'
complete -c ai -n "__fish_ai_using_subcommand serve" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand serve" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand usage" -l since -d 'Only replies of this last while: a number and s, m, h, d or w (e.g. 7d)' -r
complete -c ai -n "__fish_ai_using_subcommand usage" -l by -d 'Group by model (provider:model), provider, or day' -r -f -a "model\t''
provider\t''
day\t''"
complete -c ai -n "__fish_ai_using_subcommand usage" -l json -d 'Print JSON instead of a table'
complete -c ai -n "__fish_ai_using_subcommand usage" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand usage" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand mcp" -l kb -d 'The knowledge bases to offer (repeat or comma-separate; default: all)' -r
complete -c ai -n "__fish_ai_using_subcommand mcp" -l models -d 'The models `ask` may use (comma-separated aliases; default: every alias)' -r
complete -c ai -n "__fish_ai_using_subcommand mcp" -l timeout -d 'Stop an `ask` after this many seconds (default 600)' -r
complete -c ai -n "__fish_ai_using_subcommand mcp" -l no-kb -d 'Offer no knowledge base'
complete -c ai -n "__fish_ai_using_subcommand mcp" -l no-ask -d 'Do not offer `ask`'
complete -c ai -n "__fish_ai_using_subcommand mcp" -l no-chats -d 'Do not offer `list_chats` and `read_chat`'
complete -c ai -n "__fish_ai_using_subcommand mcp" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand mcp" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand kb; and not __fish_seen_subcommand_from add sync list stats search show copy remove model help" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand kb; and not __fish_seen_subcommand_from add sync list stats search show copy remove model help" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand kb; and not __fish_seen_subcommand_from add sync list stats search show copy remove model help" -f -a "add" -d 'Register a folder of notes as knowledge base NAME and index it'
complete -c ai -n "__fish_ai_using_subcommand kb; and not __fish_seen_subcommand_from add sync list stats search show copy remove model help" -f -a "sync" -d 'Bring indexes up to date with their folders (all, or the NAMEs given)'
complete -c ai -n "__fish_ai_using_subcommand kb; and not __fish_seen_subcommand_from add sync list stats search show copy remove model help" -f -a "list" -d 'List knowledge bases'
complete -c ai -n "__fish_ai_using_subcommand kb; and not __fish_seen_subcommand_from add sync list stats search show copy remove model help" -f -a "stats" -d 'Notes, passages, size on disk, embedding model and last sync of a knowledge base'
complete -c ai -n "__fish_ai_using_subcommand kb; and not __fish_seen_subcommand_from add sync list stats search show copy remove model help" -f -a "search" -d 'Search a knowledge base: the best notes and their passages'
complete -c ai -n "__fish_ai_using_subcommand kb; and not __fish_seen_subcommand_from add sync list stats search show copy remove model help" -f -a "show" -d 'Print one note'
complete -c ai -n "__fish_ai_using_subcommand kb; and not __fish_seen_subcommand_from add sync list stats search show copy remove model help" -f -a "copy" -d 'Move a knowledge base\'s index to another store as it is, without embedding anything again (notes, passages, vectors, links, sync state); its config then points there. The index it leaves is not changed'
complete -c ai -n "__fish_ai_using_subcommand kb; and not __fish_seen_subcommand_from add sync list stats search show copy remove model help" -f -a "remove" -d 'Forget a knowledge base: deletes its index, never the notes'
complete -c ai -n "__fish_ai_using_subcommand kb; and not __fish_seen_subcommand_from add sync list stats search show copy remove model help" -f -a "model" -d 'Local embedding models (--embed local): download, list, remove'
complete -c ai -n "__fish_ai_using_subcommand kb; and not __fish_seen_subcommand_from add sync list stats search show copy remove model help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from add" -l embed -d 'Also search by meaning, with embeddings from PROVIDER:MODEL (openai:text-embedding-3-small, gemini:gemini-embedding-001, ollama:nomic-embed-text, …), or a local model with no server or key: local, local:NAME (ai kb model list), local:/path/to/model-dir. Default: keywords only' -r
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from add" -l dimensions -d 'Size of the embeddings, where the model lets you choose (768, 1536, 3072)' -r
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from add" -l include -d 'Index only files matching GLOB (repeat; `*.md`, `docs/**`). Default: text and code files' -r
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from add" -l exclude -d 'Leave out files or folders matching GLOB (repeat; `drafts/**`)' -r
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from add" -l description -d 'What it holds, in a few words' -r
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from add" -l store -d 'Keep the index on a PostgreSQL server with pgvector, shared by everyone who adds the same NAME there: postgres://USER@HOST/DATABASE (password from PGPASSWORD or ~/.pgpass), or `postgres` for the URL in AI_KB_DATABASE_URL. Default: a SQLite file' -r
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from add" -l json -d 'Print the sync\'s counts as JSON'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from add" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from sync" -l full -d 'Rebuild from scratch'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from sync" -l json -d 'Print the counts as JSON'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from sync" -l watch -d 'After the sync, keep watching the folders and sync what changes (Ctrl+C ends it)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from sync" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from sync" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from list" -l json -d 'Print JSON instead of a table'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from stats" -l skipped -d 'List the files the sync leaves out by reason (generated notes by name)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from stats" -l json -d 'Print JSON'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from stats" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from stats" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from search" -s k -d 'How many notes (1 to 1000)' -r
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from search" -l rerank -d 'Rescore the best candidates with a reranker: `local` (a cross-encoder run in ai), `local:NAME`, or a model alias; `off` for none (default: config kb.rerank)' -r
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from search" -l json -d 'Print JSON'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from search" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from search" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from show" -l json -d 'Print JSON'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from copy" -l to -d 'Where to: postgres://USER@HOST/DATABASE (password from PGPASSWORD or ~/.pgpass), `postgres` for the URL in AI_KB_DATABASE_URL, or `sqlite` for a file in the home folder' -r
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from copy" -l force -d 'Replace the base\'s index that the target already holds'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from copy" -l json -d 'Print what was copied as JSON'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from copy" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from copy" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from model" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from model" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from model" -f -a "pull" -d 'Download a model from the Hugging Face Hub (a built-in NAME or OWNER/NAME), or check one already downloaded. Resumes an interrupted download'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from model" -f -a "list" -d 'The built-in models, their sizes, and which are on disk'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from model" -f -a "remove" -d 'Delete a downloaded model'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from model" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from help" -f -a "add" -d 'Register a folder of notes as knowledge base NAME and index it'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from help" -f -a "sync" -d 'Bring indexes up to date with their folders (all, or the NAMEs given)'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from help" -f -a "list" -d 'List knowledge bases'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from help" -f -a "stats" -d 'Notes, passages, size on disk, embedding model and last sync of a knowledge base'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from help" -f -a "search" -d 'Search a knowledge base: the best notes and their passages'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print one note'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from help" -f -a "copy" -d 'Move a knowledge base\'s index to another store as it is, without embedding anything again (notes, passages, vectors, links, sync state); its config then points there. The index it leaves is not changed'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Forget a knowledge base: deletes its index, never the notes'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from help" -f -a "model" -d 'Local embedding models (--embed local): download, list, remove'
complete -c ai -n "__fish_ai_using_subcommand kb; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ai -n "__fish_ai_using_subcommand prompt; and not __fish_seen_subcommand_from add list show edit remove help" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand prompt; and not __fish_seen_subcommand_from add list show edit remove help" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand prompt; and not __fish_seen_subcommand_from add list show edit remove help" -f -a "add" -d 'Save a prompt: `ai prompt add summarize "Summarize in {lang=English}: {input}"`. Without TEXT, the whole file (front matter and all) is read from standard input'
complete -c ai -n "__fish_ai_using_subcommand prompt; and not __fish_seen_subcommand_from add list show edit remove help" -f -a "list" -d 'List saved prompts (yours, then those of config "prompts.dirs")'
complete -c ai -n "__fish_ai_using_subcommand prompt; and not __fish_seen_subcommand_from add list show edit remove help" -f -a "show" -d 'Print a saved prompt in the file format (`ai prompt show X | ai prompt add Y` copies it)'
complete -c ai -n "__fish_ai_using_subcommand prompt; and not __fish_seen_subcommand_from add list show edit remove help" -f -a "edit" -d 'Edit a saved prompt in $VISUAL or $EDITOR'
complete -c ai -n "__fish_ai_using_subcommand prompt; and not __fish_seen_subcommand_from add list show edit remove help" -f -a "remove" -d 'Delete a saved prompt of yours'
complete -c ai -n "__fish_ai_using_subcommand prompt; and not __fish_seen_subcommand_from add list show edit remove help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from add" -l system -d 'Its system prompt' -r
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from add" -l model -d 'The model it uses when the call names none' -r
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from add" -l description -d 'What it does, in a few words' -r
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from add" -l force -d 'Replace a prompt of that name'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from add" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from list" -l json -d 'Print JSON instead of a table'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from show" -l json -d 'Print JSON'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from edit" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from edit" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'Print only the reply and errors (no notices)'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from help" -f -a "add" -d 'Save a prompt: `ai prompt add summarize "Summarize in {lang=English}: {input}"`. Without TEXT, the whole file (front matter and all) is read from standard input'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from help" -f -a "list" -d 'List saved prompts (yours, then those of config "prompts.dirs")'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print a saved prompt in the file format (`ai prompt show X | ai prompt add Y` copies it)'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from help" -f -a "edit" -d 'Edit a saved prompt in $VISUAL or $EDITOR'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Delete a saved prompt of yours'
complete -c ai -n "__fish_ai_using_subcommand prompt; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ai -n "__fish_ai_using_subcommand help; and not __fish_seen_subcommand_from init list default completions chat reply serve usage mcp kb prompt help" -f -a "init" -d 'Detect installed backend CLIs and local Ollama models; write the config'
complete -c ai -n "__fish_ai_using_subcommand help; and not __fish_seen_subcommand_from init list default completions chat reply serve usage mcp kb prompt help" -f -a "list" -d 'Show every alias by provider, and whether it can be used now'
complete -c ai -n "__fish_ai_using_subcommand help; and not __fish_seen_subcommand_from init list default completions chat reply serve usage mcp kb prompt help" -f -a "default" -d 'Show, set or clear the model used when a call names none'
complete -c ai -n "__fish_ai_using_subcommand help; and not __fish_seen_subcommand_from init list default completions chat reply serve usage mcp kb prompt help" -f -a "completions" -d 'Print a shell completion script (completes aliases too)'
complete -c ai -n "__fish_ai_using_subcommand help; and not __fish_seen_subcommand_from init list default completions chat reply serve usage mcp kb prompt help" -f -a "chat" -d 'Continue a chat (`ai chat ID [MODEL] "prompt"`), start one, or manage them'
complete -c ai -n "__fish_ai_using_subcommand help; and not __fish_seen_subcommand_from init list default completions chat reply serve usage mcp kb prompt help" -f -a "reply" -d 'Continue the most recently used chat'
complete -c ai -n "__fish_ai_using_subcommand help; and not __fish_seen_subcommand_from init list default completions chat reply serve usage mcp kb prompt help" -f -a "serve" -d 'Serve the HTTP API for models, calls and chats on 127.0.0.1'
complete -c ai -n "__fish_ai_using_subcommand help; and not __fish_seen_subcommand_from init list default completions chat reply serve usage mcp kb prompt help" -f -a "usage" -d 'Tokens and cost of past replies, from what the chats record (estimated where the backend reported none, and marked so)'
complete -c ai -n "__fish_ai_using_subcommand help; and not __fish_seen_subcommand_from init list default completions chat reply serve usage mcp kb prompt help" -f -a "mcp" -d 'Serve your notes, chats and models to an agent as MCP tools (stdin/stdout)'
complete -c ai -n "__fish_ai_using_subcommand help; and not __fish_seen_subcommand_from init list default completions chat reply serve usage mcp kb prompt help" -f -a "kb" -d 'Knowledge bases: index a folder of notes, search it, ground answers in it (--kb NAME)'
complete -c ai -n "__fish_ai_using_subcommand help; and not __fish_seen_subcommand_from init list default completions chat reply serve usage mcp kb prompt help" -f -a "prompt" -d 'Saved prompts: add, list, show, edit, remove; use one with -p NAME'
complete -c ai -n "__fish_ai_using_subcommand help; and not __fish_seen_subcommand_from init list default completions chat reply serve usage mcp kb prompt help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from chat" -f -a "list" -d 'List chats, most recently used first'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from chat" -f -a "search" -d 'Find chats by their words: every word, in any order and any case, in the title or the messages. Most recently used first'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from chat" -f -a "show" -d 'Show a chat\'s messages'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from chat" -f -a "export" -d 'Print a chat as Markdown or JSON (both import back unchanged)'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from chat" -f -a "import" -d 'Create a chat from an export (FILE, or - for standard input); prints its ID'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from chat" -f -a "delete" -d 'Delete chats (waits for a turn in progress on them)'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from chat" -f -a "rename" -d 'Give a chat a title'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from chat" -f -a "retry" -d 'Resend the prompt of a turn that failed'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from chat" -f -a "compact" -d 'Summarize all but the newest exchanges with the chat\'s own model; the summary is sent in their place from then on (the messages stay on disk)'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from chat" -f -a "gc" -d 'Delete chats not used for a while'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from chat" -f -a "new" -d 'Create an empty chat and print its ID (for scripts)'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from kb" -f -a "add" -d 'Register a folder of notes as knowledge base NAME and index it'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from kb" -f -a "sync" -d 'Bring indexes up to date with their folders (all, or the NAMEs given)'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from kb" -f -a "list" -d 'List knowledge bases'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from kb" -f -a "stats" -d 'Notes, passages, size on disk, embedding model and last sync of a knowledge base'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from kb" -f -a "search" -d 'Search a knowledge base: the best notes and their passages'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from kb" -f -a "show" -d 'Print one note'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from kb" -f -a "copy" -d 'Move a knowledge base\'s index to another store as it is, without embedding anything again (notes, passages, vectors, links, sync state); its config then points there. The index it leaves is not changed'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from kb" -f -a "remove" -d 'Forget a knowledge base: deletes its index, never the notes'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from kb" -f -a "model" -d 'Local embedding models (--embed local): download, list, remove'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from prompt" -f -a "add" -d 'Save a prompt: `ai prompt add summarize "Summarize in {lang=English}: {input}"`. Without TEXT, the whole file (front matter and all) is read from standard input'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from prompt" -f -a "list" -d 'List saved prompts (yours, then those of config "prompts.dirs")'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from prompt" -f -a "show" -d 'Print a saved prompt in the file format (`ai prompt show X | ai prompt add Y` copies it)'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from prompt" -f -a "edit" -d 'Edit a saved prompt in $VISUAL or $EDITOR'
complete -c ai -n "__fish_ai_using_subcommand help; and __fish_seen_subcommand_from prompt" -f -a "remove" -d 'Delete a saved prompt of yours'

# Aliases from your config and chat IDs (with titles), asked from `ai` itself.
complete -c ai -n "__fish_is_first_arg" -f -a "(ai __complete models 2>/dev/null)"
complete -c ai -n "__fish_seen_subcommand_from chat show delete rename retry" -f -a "(ai __complete chats 2>/dev/null)"
complete -c ai -l chat -x -a "(ai __complete chats 2>/dev/null)"
# Saved prompts, for -p and `ai prompt show|edit|remove`.
complete -c ai -s p -l prompt -x -a "(ai __complete prompts 2>/dev/null)"
complete -c ai -n "__fish_seen_subcommand_from prompt; and __fish_seen_subcommand_from show edit remove" -f -a "(ai __complete prompts 2>/dev/null)"
