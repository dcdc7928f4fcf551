
use builtin;
use str;

set edit:completion:arg-completer[ai] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'ai'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'ai'= {
            cand 'claude' 'claude sonnet'
            cand 'haiku' 'claude haiku'
            cand 'sonnet' 'claude sonnet'
            cand 'opus' 'claude opus'
            cand 'opus-m' 'claude opus@medium'
            cand 'opus-h' 'claude opus@high'
            cand 'codex' 'codex gpt-5.3-codex'
            cand 'codex-m' 'codex gpt-5.3-codex@medium'
            cand 'codex-h' 'codex gpt-5.3-codex@high'
            cand 'codex-xh' 'codex gpt-5.3-codex@xhigh'
            cand 'gpt' 'codex gpt-5.2'
            cand 'codex-max' 'codex gpt-5.1-codex-max'
            cand 'codex-mini' 'codex gpt-5.1-codex-mini'
            cand 'gemini' 'gemini gemini-3-flash-preview'
            cand 'pro' 'gemini gemini-3-pro-preview'
            cand 'flash' 'gemini gemini-3-flash-preview'
            cand 'pro-2.5' 'gemini gemini-2.5-pro'
            cand 'flash-2.5' 'gemini gemini-2.5-flash'
            cand 'flash-lite' 'gemini gemini-2.5-flash-lite'
            cand 'qwen' 'qwen coder-model'
            cand 'qwen-vision' 'qwen vision-model'
            cand 'ollama' 'ollama llama3'
            cand 'glm' 'glm glm-5'
            cand 'glm5' 'glm glm-5'
            cand 'glm4' 'glm glm-4.7'
            cand 'glm-air' 'glm glm-4.5-air'
            cand 'mimo' 'openrouter xiaomi/mimo-v2-flash:free'
            cand 'olmo' 'openrouter allenai/olmo-3.1-32b-think:free'
            cand 'deepseek' 'openrouter nex-agi/deepseek-v3.1-nex-n1:free'
            cand 'chimera' 'openrouter tngtech/deepseek-r1t2-chimera:free'
            cand 'devstral' 'openrouter mistralai/devstral-2512:free'
            cand 'oss' 'openrouter openai/gpt-oss-120b:free'
            cand 'echo' 'echo echo'
            cand -F 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)'
            cand --file 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)'
            cand --timeout 'Stop the backend after this many seconds (default: config "timeout", else 1200)'
            cand --chat 'Continue chat ID (or start a chat with this name: letters, digits, - and _)'
            cand --system 'System prompt of a new chat (default: config "chat.system")'
            cand --kb 'Ground the answer in a knowledge base (repeat for several); a chat remembers them'
            cand --data 'A JSON document the model can query with tools (repeat: primary, secondary)'
            cand --tools-file 'Domain tools over the --data documents, declared in a JSON file'
            cand --tool 'Offer a command tool of config "tools.commands" (repeat); each run is asked for'
            cand --mcp 'Start an MCP server of config "mcp.servers" for this call and offer its tools (repeat)'
            cand --max-tool-rounds 'Tool rounds per turn, at most (default: config "tools.max_rounds", else 10)'
            cand -p 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}'
            cand --prompt 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}'
            cand -v 'A variable of the saved prompt (repeat): -v lang=German'
            cand --var 'A variable of the saved prompt (repeat): -v lang=German'
            cand --schema 'The reply is JSON that fits this schema: a file, ''{json schema}'', or ''name str, age int, tags [str]''. Checked, asked again once, else exit 1'
            cand --keep-attachments 'Keep a copy of each attached image or PDF in the chat''s folder (otherwise the chat records only its name, type, size and SHA-256)'
            cand --dry-run 'Print the exact program, arguments and prompt that would run; run nothing'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand --json 'Print one JSON object (reply, model, provider, timing) instead of the raw reply'
            cand --json-stream 'JSON lines on stdout as the reply streams (for programs such as `ai serve`)'
            cand --yolo 'Let the backend act without asking (each CLI''s auto-approve flag)'
            cand --cmd 'The reply is one shell command for this system, printed bare'
            cand --run 'Like --cmd, then show it, ask, and run it with your shell (exit with its code)'
            cand -y 'With run: do not ask before running the command'
            cand --yes 'With run: do not ask before running the command'
            cand --no-stdin 'Do not read standard input, even when it is not a terminal'
            cand -c 'Continue the most recently used chat, as `ai reply` does'
            cand --continue 'Continue the most recently used chat, as `ai reply` does'
            cand --no-chat 'Do not save this prompt as a chat'
            cand --no-wait 'Fail at once (exit 75) when the chat is in use by another call, instead of waiting'
            cand --no-kb 'No knowledge base for this call (not the chat''s, nor config "kb.default")'
            cand -i 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)'
            cand --interactive 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)'
            cand --tools 'Let the model search the knowledge bases itself, with tools (HTTP providers)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand init 'Detect installed backend CLIs and local Ollama models; write the config'
            cand list 'Show every alias by provider, and whether it can be used now'
            cand default 'Show, set or clear the model used when a call names none'
            cand completions 'Print a shell completion script (completes aliases too)'
            cand chat 'Continue a chat (`ai chat ID [MODEL] "prompt"`), start one, or manage them'
            cand reply 'Continue the most recently used chat'
            cand serve 'Serve the HTTP API for models, calls and chats on 127.0.0.1'
            cand usage 'Tokens and cost of past replies, from what the chats record (estimated where the backend reported none, and marked so)'
            cand mcp 'Serve your notes, chats and models to an agent as MCP tools (stdin/stdout)'
            cand kb 'Knowledge bases: index a folder of notes, search it, ground answers in it (--kb NAME)'
            cand prompt 'Saved prompts: add, list, show, edit, remove; use one with -p NAME'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ai;init'= {
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;list'= {
            cand --json 'Print JSON instead of a table'
            cand --providers 'Only the providers (every CLI and HTTP API, with or without an alias)'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;default'= {
            cand --clear 'Remove the default'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;completions'= {
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;chat'= {
            cand -F 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)'
            cand --file 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)'
            cand --timeout 'Stop the backend after this many seconds (default: config "timeout", else 1200)'
            cand --chat 'Continue chat ID (or start a chat with this name: letters, digits, - and _)'
            cand --system 'System prompt of a new chat (default: config "chat.system")'
            cand --kb 'Ground the answer in a knowledge base (repeat for several); a chat remembers them'
            cand --data 'A JSON document the model can query with tools (repeat: primary, secondary)'
            cand --tools-file 'Domain tools over the --data documents, declared in a JSON file'
            cand --tool 'Offer a command tool of config "tools.commands" (repeat); each run is asked for'
            cand --mcp 'Start an MCP server of config "mcp.servers" for this call and offer its tools (repeat)'
            cand --max-tool-rounds 'Tool rounds per turn, at most (default: config "tools.max_rounds", else 10)'
            cand -p 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}'
            cand --prompt 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}'
            cand -v 'A variable of the saved prompt (repeat): -v lang=German'
            cand --var 'A variable of the saved prompt (repeat): -v lang=German'
            cand --schema 'The reply is JSON that fits this schema: a file, ''{json schema}'', or ''name str, age int, tags [str]''. Checked, asked again once, else exit 1'
            cand --keep-attachments 'Keep a copy of each attached image or PDF in the chat''s folder (otherwise the chat records only its name, type, size and SHA-256)'
            cand --dry-run 'Print the exact program, arguments and prompt that would run; run nothing'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand --json 'Print one JSON object (reply, model, provider, timing) instead of the raw reply'
            cand --json-stream 'JSON lines on stdout as the reply streams (for programs such as `ai serve`)'
            cand --yolo 'Let the backend act without asking (each CLI''s auto-approve flag)'
            cand --cmd 'The reply is one shell command for this system, printed bare'
            cand --run 'Like --cmd, then show it, ask, and run it with your shell (exit with its code)'
            cand -y 'With run: do not ask before running the command'
            cand --yes 'With run: do not ask before running the command'
            cand --no-stdin 'Do not read standard input, even when it is not a terminal'
            cand -c 'Continue the most recently used chat, as `ai reply` does'
            cand --continue 'Continue the most recently used chat, as `ai reply` does'
            cand --no-chat 'Do not save this prompt as a chat'
            cand --no-wait 'Fail at once (exit 75) when the chat is in use by another call, instead of waiting'
            cand --no-kb 'No knowledge base for this call (not the chat''s, nor config "kb.default")'
            cand -i 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)'
            cand --interactive 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)'
            cand --tools 'Let the model search the knowledge bases itself, with tools (HTTP providers)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand list 'List chats, most recently used first'
            cand search 'Find chats by their words: every word, in any order and any case, in the title or the messages. Most recently used first'
            cand show 'Show a chat''s messages'
            cand export 'Print a chat as Markdown or JSON (both import back unchanged)'
            cand import 'Create a chat from an export (FILE, or - for standard input); prints its ID'
            cand delete 'Delete chats (waits for a turn in progress on them)'
            cand rename 'Give a chat a title'
            cand retry 'Resend the prompt of a turn that failed'
            cand compact 'Summarize all but the newest exchanges with the chat''s own model; the summary is sent in their place from then on (the messages stay on disk)'
            cand gc 'Delete chats not used for a while'
            cand new 'Create an empty chat and print its ID (for scripts)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ai;chat;list'= {
            cand --limit 'Show at most N chats (0: all)'
            cand --json 'Print JSON instead of a table'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;chat;search'= {
            cand --limit 'Show at most N chats (0: all)'
            cand --json 'Print JSON instead of text'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;chat;show'= {
            cand --json 'Print JSON instead of text'
            cand --stats 'Counts instead of messages: messages, estimated tokens, reported usage, models'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;chat;export'= {
            cand --format 'format'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;chat;import'= {
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;chat;delete'= {
            cand --no-wait 'Fail at once when a chat is in use'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;chat;rename'= {
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;chat;retry'= {
            cand -F 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)'
            cand --file 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)'
            cand --timeout 'Stop the backend after this many seconds (default: config "timeout", else 1200)'
            cand --chat 'Continue chat ID (or start a chat with this name: letters, digits, - and _)'
            cand --system 'System prompt of a new chat (default: config "chat.system")'
            cand --kb 'Ground the answer in a knowledge base (repeat for several); a chat remembers them'
            cand --data 'A JSON document the model can query with tools (repeat: primary, secondary)'
            cand --tools-file 'Domain tools over the --data documents, declared in a JSON file'
            cand --tool 'Offer a command tool of config "tools.commands" (repeat); each run is asked for'
            cand --mcp 'Start an MCP server of config "mcp.servers" for this call and offer its tools (repeat)'
            cand --max-tool-rounds 'Tool rounds per turn, at most (default: config "tools.max_rounds", else 10)'
            cand -p 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}'
            cand --prompt 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}'
            cand -v 'A variable of the saved prompt (repeat): -v lang=German'
            cand --var 'A variable of the saved prompt (repeat): -v lang=German'
            cand --schema 'The reply is JSON that fits this schema: a file, ''{json schema}'', or ''name str, age int, tags [str]''. Checked, asked again once, else exit 1'
            cand --keep-attachments 'Keep a copy of each attached image or PDF in the chat''s folder (otherwise the chat records only its name, type, size and SHA-256)'
            cand --dry-run 'Print the exact program, arguments and prompt that would run; run nothing'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand --json 'Print one JSON object (reply, model, provider, timing) instead of the raw reply'
            cand --json-stream 'JSON lines on stdout as the reply streams (for programs such as `ai serve`)'
            cand --yolo 'Let the backend act without asking (each CLI''s auto-approve flag)'
            cand --cmd 'The reply is one shell command for this system, printed bare'
            cand --run 'Like --cmd, then show it, ask, and run it with your shell (exit with its code)'
            cand -y 'With run: do not ask before running the command'
            cand --yes 'With run: do not ask before running the command'
            cand --no-stdin 'Do not read standard input, even when it is not a terminal'
            cand -c 'Continue the most recently used chat, as `ai reply` does'
            cand --continue 'Continue the most recently used chat, as `ai reply` does'
            cand --no-chat 'Do not save this prompt as a chat'
            cand --no-wait 'Fail at once (exit 75) when the chat is in use by another call, instead of waiting'
            cand --no-kb 'No knowledge base for this call (not the chat''s, nor config "kb.default")'
            cand -i 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)'
            cand --interactive 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)'
            cand --tools 'Let the model search the knowledge bases itself, with tools (HTTP providers)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;chat;compact'= {
            cand --keep 'Exchanges to keep as they are'
            cand --timeout 'Stop the backend after this many seconds'
            cand --no-wait 'Fail at once when the chat is in use'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;chat;gc'= {
            cand --older-than 'Age: a number and s, m, h, d or w (e.g. 30d)'
            cand --dry-run 'Only print what would be deleted'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;chat;new'= {
            cand --system 'The chat''s system prompt'
            cand --name 'A name instead of a generated ID'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;chat;help'= {
            cand list 'List chats, most recently used first'
            cand search 'Find chats by their words: every word, in any order and any case, in the title or the messages. Most recently used first'
            cand show 'Show a chat''s messages'
            cand export 'Print a chat as Markdown or JSON (both import back unchanged)'
            cand import 'Create a chat from an export (FILE, or - for standard input); prints its ID'
            cand delete 'Delete chats (waits for a turn in progress on them)'
            cand rename 'Give a chat a title'
            cand retry 'Resend the prompt of a turn that failed'
            cand compact 'Summarize all but the newest exchanges with the chat''s own model; the summary is sent in their place from then on (the messages stay on disk)'
            cand gc 'Delete chats not used for a while'
            cand new 'Create an empty chat and print its ID (for scripts)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ai;chat;help;list'= {
        }
        &'ai;chat;help;search'= {
        }
        &'ai;chat;help;show'= {
        }
        &'ai;chat;help;export'= {
        }
        &'ai;chat;help;import'= {
        }
        &'ai;chat;help;delete'= {
        }
        &'ai;chat;help;rename'= {
        }
        &'ai;chat;help;retry'= {
        }
        &'ai;chat;help;compact'= {
        }
        &'ai;chat;help;gc'= {
        }
        &'ai;chat;help;new'= {
        }
        &'ai;chat;help;help'= {
        }
        &'ai;reply'= {
            cand -F 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)'
            cand --file 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)'
            cand --timeout 'Stop the backend after this many seconds (default: config "timeout", else 1200)'
            cand --chat 'Continue chat ID (or start a chat with this name: letters, digits, - and _)'
            cand --system 'System prompt of a new chat (default: config "chat.system")'
            cand --kb 'Ground the answer in a knowledge base (repeat for several); a chat remembers them'
            cand --data 'A JSON document the model can query with tools (repeat: primary, secondary)'
            cand --tools-file 'Domain tools over the --data documents, declared in a JSON file'
            cand --tool 'Offer a command tool of config "tools.commands" (repeat); each run is asked for'
            cand --mcp 'Start an MCP server of config "mcp.servers" for this call and offer its tools (repeat)'
            cand --max-tool-rounds 'Tool rounds per turn, at most (default: config "tools.max_rounds", else 10)'
            cand -p 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}'
            cand --prompt 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}'
            cand -v 'A variable of the saved prompt (repeat): -v lang=German'
            cand --var 'A variable of the saved prompt (repeat): -v lang=German'
            cand --schema 'The reply is JSON that fits this schema: a file, ''{json schema}'', or ''name str, age int, tags [str]''. Checked, asked again once, else exit 1'
            cand --keep-attachments 'Keep a copy of each attached image or PDF in the chat''s folder (otherwise the chat records only its name, type, size and SHA-256)'
            cand --dry-run 'Print the exact program, arguments and prompt that would run; run nothing'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand --json 'Print one JSON object (reply, model, provider, timing) instead of the raw reply'
            cand --json-stream 'JSON lines on stdout as the reply streams (for programs such as `ai serve`)'
            cand --yolo 'Let the backend act without asking (each CLI''s auto-approve flag)'
            cand --cmd 'The reply is one shell command for this system, printed bare'
            cand --run 'Like --cmd, then show it, ask, and run it with your shell (exit with its code)'
            cand -y 'With run: do not ask before running the command'
            cand --yes 'With run: do not ask before running the command'
            cand --no-stdin 'Do not read standard input, even when it is not a terminal'
            cand -c 'Continue the most recently used chat, as `ai reply` does'
            cand --continue 'Continue the most recently used chat, as `ai reply` does'
            cand --no-chat 'Do not save this prompt as a chat'
            cand --no-wait 'Fail at once (exit 75) when the chat is in use by another call, instead of waiting'
            cand --no-kb 'No knowledge base for this call (not the chat''s, nor config "kb.default")'
            cand -i 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)'
            cand --interactive 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)'
            cand --tools 'Let the model search the knowledge bases itself, with tools (HTTP providers)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;serve'= {
            cand --host 'Address to listen on'
            cand --token 'The bearer token clients must send, 16 characters or more (default: AI_CLI_SERVER_TOKEN, else a new one, printed at start)'
            cand --max-calls 'Model calls run at once; more are answered 429 with Retry-After'
            cand --max-connections 'Open connections at once; more are answered 503 and closed'
            cand --call-timeout 'Stop a call (as Ctrl+C would, keeping its partial reply) after this many seconds'
            cand --idle-timeout 'Close a connection whose request has not fully arrived after this many seconds'
            cand --max-output 'The most output of one `ai` child kept in memory (one line of it, or a whole list); beyond it the child is stopped and the call fails with 502'
            cand --no-auth 'Require no token (loopback only)'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;usage'= {
            cand --since 'Only replies of this last while: a number and s, m, h, d or w (e.g. 7d)'
            cand --by 'Group by model (provider:model), provider, or day'
            cand --json 'Print JSON instead of a table'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;mcp'= {
            cand --kb 'The knowledge bases to offer (repeat or comma-separate; default: all)'
            cand --models 'The models `ask` may use (comma-separated aliases; default: every alias)'
            cand --timeout 'Stop an `ask` after this many seconds (default 600)'
            cand --no-kb 'Offer no knowledge base'
            cand --no-ask 'Do not offer `ask`'
            cand --no-chats 'Do not offer `list_chats` and `read_chat`'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;kb'= {
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand add 'Register a folder of notes as knowledge base NAME and index it'
            cand sync 'Bring indexes up to date with their folders (all, or the NAMEs given)'
            cand list 'List knowledge bases'
            cand stats 'Notes, passages, size on disk, embedding model and last sync of a knowledge base'
            cand search 'Search a knowledge base: the best notes and their passages'
            cand show 'Print one note'
            cand copy 'Move a knowledge base''s index to another store as it is, without embedding anything again (notes, passages, vectors, links, sync state); its config then points there. The index it leaves is not changed'
            cand remove 'Forget a knowledge base: deletes its index, never the notes'
            cand model 'Local embedding models (--embed local): download, list, remove'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ai;kb;add'= {
            cand --embed 'Also search by meaning, with embeddings from PROVIDER:MODEL (openai:text-embedding-3-small, gemini:gemini-embedding-001, ollama:nomic-embed-text, …), or a local model with no server or key: local, local:NAME (ai kb model list), local:/path/to/model-dir. Default: keywords only'
            cand --dimensions 'Size of the embeddings, where the model lets you choose (768, 1536, 3072)'
            cand --include 'Index only files matching GLOB (repeat; `*.md`, `docs/**`). Default: text and code files'
            cand --exclude 'Leave out files or folders matching GLOB (repeat; `drafts/**`)'
            cand --description 'What it holds, in a few words'
            cand --store 'Keep the index on a PostgreSQL server with pgvector, shared by everyone who adds the same NAME there: postgres://USER@HOST/DATABASE (password from PGPASSWORD or ~/.pgpass), or `postgres` for the URL in AI_KB_DATABASE_URL. Default: a SQLite file'
            cand --json 'Print the sync''s counts as JSON'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;kb;sync'= {
            cand --full 'Rebuild from scratch'
            cand --json 'Print the counts as JSON'
            cand --watch 'After the sync, keep watching the folders and sync what changes (Ctrl+C ends it)'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;kb;list'= {
            cand --json 'Print JSON instead of a table'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;kb;stats'= {
            cand --skipped 'List the files the sync leaves out by reason (generated notes by name)'
            cand --json 'Print JSON'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;kb;search'= {
            cand -k 'How many notes (1 to 1000)'
            cand --rerank 'Rescore the best candidates with a reranker: `local` (a cross-encoder run in ai), `local:NAME`, or a model alias; `off` for none (default: config kb.rerank)'
            cand --json 'Print JSON'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;kb;show'= {
            cand --json 'Print JSON'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;kb;copy'= {
            cand --to 'Where to: postgres://USER@HOST/DATABASE (password from PGPASSWORD or ~/.pgpass), `postgres` for the URL in AI_KB_DATABASE_URL, or `sqlite` for a file in the home folder'
            cand --force 'Replace the base''s index that the target already holds'
            cand --json 'Print what was copied as JSON'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;kb;remove'= {
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;kb;model'= {
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand pull 'Download a model from the Hugging Face Hub (a built-in NAME or OWNER/NAME), or check one already downloaded. Resumes an interrupted download'
            cand list 'The built-in models, their sizes, and which are on disk'
            cand remove 'Delete a downloaded model'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ai;kb;model;pull'= {
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;kb;model;list'= {
            cand --json 'Print JSON instead of a table'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;kb;model;remove'= {
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;kb;model;help'= {
            cand pull 'Download a model from the Hugging Face Hub (a built-in NAME or OWNER/NAME), or check one already downloaded. Resumes an interrupted download'
            cand list 'The built-in models, their sizes, and which are on disk'
            cand remove 'Delete a downloaded model'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ai;kb;model;help;pull'= {
        }
        &'ai;kb;model;help;list'= {
        }
        &'ai;kb;model;help;remove'= {
        }
        &'ai;kb;model;help;help'= {
        }
        &'ai;kb;help'= {
            cand add 'Register a folder of notes as knowledge base NAME and index it'
            cand sync 'Bring indexes up to date with their folders (all, or the NAMEs given)'
            cand list 'List knowledge bases'
            cand stats 'Notes, passages, size on disk, embedding model and last sync of a knowledge base'
            cand search 'Search a knowledge base: the best notes and their passages'
            cand show 'Print one note'
            cand copy 'Move a knowledge base''s index to another store as it is, without embedding anything again (notes, passages, vectors, links, sync state); its config then points there. The index it leaves is not changed'
            cand remove 'Forget a knowledge base: deletes its index, never the notes'
            cand model 'Local embedding models (--embed local): download, list, remove'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ai;kb;help;add'= {
        }
        &'ai;kb;help;sync'= {
        }
        &'ai;kb;help;list'= {
        }
        &'ai;kb;help;stats'= {
        }
        &'ai;kb;help;search'= {
        }
        &'ai;kb;help;show'= {
        }
        &'ai;kb;help;copy'= {
        }
        &'ai;kb;help;remove'= {
        }
        &'ai;kb;help;model'= {
            cand pull 'Download a model from the Hugging Face Hub (a built-in NAME or OWNER/NAME), or check one already downloaded. Resumes an interrupted download'
            cand list 'The built-in models, their sizes, and which are on disk'
            cand remove 'Delete a downloaded model'
        }
        &'ai;kb;help;model;pull'= {
        }
        &'ai;kb;help;model;list'= {
        }
        &'ai;kb;help;model;remove'= {
        }
        &'ai;kb;help;help'= {
        }
        &'ai;prompt'= {
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand add 'Save a prompt: `ai prompt add summarize "Summarize in {lang=English}: {input}"`. Without TEXT, the whole file (front matter and all) is read from standard input'
            cand list 'List saved prompts (yours, then those of config "prompts.dirs")'
            cand show 'Print a saved prompt in the file format (`ai prompt show X | ai prompt add Y` copies it)'
            cand edit 'Edit a saved prompt in $VISUAL or $EDITOR'
            cand remove 'Delete a saved prompt of yours'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ai;prompt;add'= {
            cand --system 'Its system prompt'
            cand --model 'The model it uses when the call names none'
            cand --description 'What it does, in a few words'
            cand --force 'Replace a prompt of that name'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;prompt;list'= {
            cand --json 'Print JSON instead of a table'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;prompt;show'= {
            cand --json 'Print JSON'
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;prompt;edit'= {
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;prompt;remove'= {
            cand -q 'Print only the reply and errors (no notices)'
            cand --quiet 'Print only the reply and errors (no notices)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ai;prompt;help'= {
            cand add 'Save a prompt: `ai prompt add summarize "Summarize in {lang=English}: {input}"`. Without TEXT, the whole file (front matter and all) is read from standard input'
            cand list 'List saved prompts (yours, then those of config "prompts.dirs")'
            cand show 'Print a saved prompt in the file format (`ai prompt show X | ai prompt add Y` copies it)'
            cand edit 'Edit a saved prompt in $VISUAL or $EDITOR'
            cand remove 'Delete a saved prompt of yours'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ai;prompt;help;add'= {
        }
        &'ai;prompt;help;list'= {
        }
        &'ai;prompt;help;show'= {
        }
        &'ai;prompt;help;edit'= {
        }
        &'ai;prompt;help;remove'= {
        }
        &'ai;prompt;help;help'= {
        }
        &'ai;help'= {
            cand init 'Detect installed backend CLIs and local Ollama models; write the config'
            cand list 'Show every alias by provider, and whether it can be used now'
            cand default 'Show, set or clear the model used when a call names none'
            cand completions 'Print a shell completion script (completes aliases too)'
            cand chat 'Continue a chat (`ai chat ID [MODEL] "prompt"`), start one, or manage them'
            cand reply 'Continue the most recently used chat'
            cand serve 'Serve the HTTP API for models, calls and chats on 127.0.0.1'
            cand usage 'Tokens and cost of past replies, from what the chats record (estimated where the backend reported none, and marked so)'
            cand mcp 'Serve your notes, chats and models to an agent as MCP tools (stdin/stdout)'
            cand kb 'Knowledge bases: index a folder of notes, search it, ground answers in it (--kb NAME)'
            cand prompt 'Saved prompts: add, list, show, edit, remove; use one with -p NAME'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ai;help;init'= {
        }
        &'ai;help;list'= {
        }
        &'ai;help;default'= {
        }
        &'ai;help;completions'= {
        }
        &'ai;help;chat'= {
            cand list 'List chats, most recently used first'
            cand search 'Find chats by their words: every word, in any order and any case, in the title or the messages. Most recently used first'
            cand show 'Show a chat''s messages'
            cand export 'Print a chat as Markdown or JSON (both import back unchanged)'
            cand import 'Create a chat from an export (FILE, or - for standard input); prints its ID'
            cand delete 'Delete chats (waits for a turn in progress on them)'
            cand rename 'Give a chat a title'
            cand retry 'Resend the prompt of a turn that failed'
            cand compact 'Summarize all but the newest exchanges with the chat''s own model; the summary is sent in their place from then on (the messages stay on disk)'
            cand gc 'Delete chats not used for a while'
            cand new 'Create an empty chat and print its ID (for scripts)'
        }
        &'ai;help;chat;list'= {
        }
        &'ai;help;chat;search'= {
        }
        &'ai;help;chat;show'= {
        }
        &'ai;help;chat;export'= {
        }
        &'ai;help;chat;import'= {
        }
        &'ai;help;chat;delete'= {
        }
        &'ai;help;chat;rename'= {
        }
        &'ai;help;chat;retry'= {
        }
        &'ai;help;chat;compact'= {
        }
        &'ai;help;chat;gc'= {
        }
        &'ai;help;chat;new'= {
        }
        &'ai;help;reply'= {
        }
        &'ai;help;serve'= {
        }
        &'ai;help;usage'= {
        }
        &'ai;help;mcp'= {
        }
        &'ai;help;kb'= {
            cand add 'Register a folder of notes as knowledge base NAME and index it'
            cand sync 'Bring indexes up to date with their folders (all, or the NAMEs given)'
            cand list 'List knowledge bases'
            cand stats 'Notes, passages, size on disk, embedding model and last sync of a knowledge base'
            cand search 'Search a knowledge base: the best notes and their passages'
            cand show 'Print one note'
            cand copy 'Move a knowledge base''s index to another store as it is, without embedding anything again (notes, passages, vectors, links, sync state); its config then points there. The index it leaves is not changed'
            cand remove 'Forget a knowledge base: deletes its index, never the notes'
            cand model 'Local embedding models (--embed local): download, list, remove'
        }
        &'ai;help;kb;add'= {
        }
        &'ai;help;kb;sync'= {
        }
        &'ai;help;kb;list'= {
        }
        &'ai;help;kb;stats'= {
        }
        &'ai;help;kb;search'= {
        }
        &'ai;help;kb;show'= {
        }
        &'ai;help;kb;copy'= {
        }
        &'ai;help;kb;remove'= {
        }
        &'ai;help;kb;model'= {
            cand pull 'Download a model from the Hugging Face Hub (a built-in NAME or OWNER/NAME), or check one already downloaded. Resumes an interrupted download'
            cand list 'The built-in models, their sizes, and which are on disk'
            cand remove 'Delete a downloaded model'
        }
        &'ai;help;kb;model;pull'= {
        }
        &'ai;help;kb;model;list'= {
        }
        &'ai;help;kb;model;remove'= {
        }
        &'ai;help;prompt'= {
            cand add 'Save a prompt: `ai prompt add summarize "Summarize in {lang=English}: {input}"`. Without TEXT, the whole file (front matter and all) is read from standard input'
            cand list 'List saved prompts (yours, then those of config "prompts.dirs")'
            cand show 'Print a saved prompt in the file format (`ai prompt show X | ai prompt add Y` copies it)'
            cand edit 'Edit a saved prompt in $VISUAL or $EDITOR'
            cand remove 'Delete a saved prompt of yours'
        }
        &'ai;help;prompt;add'= {
        }
        &'ai;help;prompt;list'= {
        }
        &'ai;help;prompt;show'= {
        }
        &'ai;help;prompt;edit'= {
        }
        &'ai;help;prompt;remove'= {
        }
        &'ai;help;help'= {
        }
    ]
    $completions[$command]
}
