
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'ai' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'ai'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'ai' {
            [CompletionResult]::new('claude', 'claude', [CompletionResultType]::ParameterValue, 'claude sonnet')
            [CompletionResult]::new('haiku', 'haiku', [CompletionResultType]::ParameterValue, 'claude haiku')
            [CompletionResult]::new('sonnet', 'sonnet', [CompletionResultType]::ParameterValue, 'claude sonnet')
            [CompletionResult]::new('opus', 'opus', [CompletionResultType]::ParameterValue, 'claude opus')
            [CompletionResult]::new('opus-m', 'opus-m', [CompletionResultType]::ParameterValue, 'claude opus@medium')
            [CompletionResult]::new('opus-h', 'opus-h', [CompletionResultType]::ParameterValue, 'claude opus@high')
            [CompletionResult]::new('codex', 'codex', [CompletionResultType]::ParameterValue, 'codex gpt-5.3-codex')
            [CompletionResult]::new('codex-m', 'codex-m', [CompletionResultType]::ParameterValue, 'codex gpt-5.3-codex@medium')
            [CompletionResult]::new('codex-h', 'codex-h', [CompletionResultType]::ParameterValue, 'codex gpt-5.3-codex@high')
            [CompletionResult]::new('codex-xh', 'codex-xh', [CompletionResultType]::ParameterValue, 'codex gpt-5.3-codex@xhigh')
            [CompletionResult]::new('gpt', 'gpt', [CompletionResultType]::ParameterValue, 'codex gpt-5.2')
            [CompletionResult]::new('codex-max', 'codex-max', [CompletionResultType]::ParameterValue, 'codex gpt-5.1-codex-max')
            [CompletionResult]::new('codex-mini', 'codex-mini', [CompletionResultType]::ParameterValue, 'codex gpt-5.1-codex-mini')
            [CompletionResult]::new('gemini', 'gemini', [CompletionResultType]::ParameterValue, 'gemini gemini-3-flash-preview')
            [CompletionResult]::new('pro', 'pro', [CompletionResultType]::ParameterValue, 'gemini gemini-3-pro-preview')
            [CompletionResult]::new('flash', 'flash', [CompletionResultType]::ParameterValue, 'gemini gemini-3-flash-preview')
            [CompletionResult]::new('pro-2.5', 'pro-2.5', [CompletionResultType]::ParameterValue, 'gemini gemini-2.5-pro')
            [CompletionResult]::new('flash-2.5', 'flash-2.5', [CompletionResultType]::ParameterValue, 'gemini gemini-2.5-flash')
            [CompletionResult]::new('flash-lite', 'flash-lite', [CompletionResultType]::ParameterValue, 'gemini gemini-2.5-flash-lite')
            [CompletionResult]::new('qwen', 'qwen', [CompletionResultType]::ParameterValue, 'qwen coder-model')
            [CompletionResult]::new('qwen-vision', 'qwen-vision', [CompletionResultType]::ParameterValue, 'qwen vision-model')
            [CompletionResult]::new('ollama', 'ollama', [CompletionResultType]::ParameterValue, 'ollama llama3')
            [CompletionResult]::new('glm', 'glm', [CompletionResultType]::ParameterValue, 'glm glm-5')
            [CompletionResult]::new('glm5', 'glm5', [CompletionResultType]::ParameterValue, 'glm glm-5')
            [CompletionResult]::new('glm4', 'glm4', [CompletionResultType]::ParameterValue, 'glm glm-4.7')
            [CompletionResult]::new('glm-air', 'glm-air', [CompletionResultType]::ParameterValue, 'glm glm-4.5-air')
            [CompletionResult]::new('mimo', 'mimo', [CompletionResultType]::ParameterValue, 'openrouter xiaomi/mimo-v2-flash:free')
            [CompletionResult]::new('olmo', 'olmo', [CompletionResultType]::ParameterValue, 'openrouter allenai/olmo-3.1-32b-think:free')
            [CompletionResult]::new('deepseek', 'deepseek', [CompletionResultType]::ParameterValue, 'openrouter nex-agi/deepseek-v3.1-nex-n1:free')
            [CompletionResult]::new('chimera', 'chimera', [CompletionResultType]::ParameterValue, 'openrouter tngtech/deepseek-r1t2-chimera:free')
            [CompletionResult]::new('devstral', 'devstral', [CompletionResultType]::ParameterValue, 'openrouter mistralai/devstral-2512:free')
            [CompletionResult]::new('oss', 'oss', [CompletionResultType]::ParameterValue, 'openrouter openai/gpt-oss-120b:free')
            [CompletionResult]::new('echo', 'echo', [CompletionResultType]::ParameterValue, 'echo echo')
            [CompletionResult]::new('-F', '-F ', [CompletionResultType]::ParameterName, 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the backend after this many seconds (default: config "timeout", else 1200)')
            [CompletionResult]::new('--chat', '--chat', [CompletionResultType]::ParameterName, 'Continue chat ID (or start a chat with this name: letters, digits, - and _)')
            [CompletionResult]::new('--system', '--system', [CompletionResultType]::ParameterName, 'System prompt of a new chat (default: config "chat.system")')
            [CompletionResult]::new('--kb', '--kb', [CompletionResultType]::ParameterName, 'Ground the answer in a knowledge base (repeat for several); a chat remembers them')
            [CompletionResult]::new('--data', '--data', [CompletionResultType]::ParameterName, 'A JSON document the model can query with tools (repeat: primary, secondary)')
            [CompletionResult]::new('--tools-file', '--tools-file', [CompletionResultType]::ParameterName, 'Domain tools over the --data documents, declared in a JSON file')
            [CompletionResult]::new('--tool', '--tool', [CompletionResultType]::ParameterName, 'Offer a command tool of config "tools.commands" (repeat); each run is asked for')
            [CompletionResult]::new('--mcp', '--mcp', [CompletionResultType]::ParameterName, 'Start an MCP server of config "mcp.servers" for this call and offer its tools (repeat)')
            [CompletionResult]::new('--max-tool-rounds', '--max-tool-rounds', [CompletionResultType]::ParameterName, 'Tool rounds per turn, at most (default: config "tools.max_rounds", else 10)')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}')
            [CompletionResult]::new('--prompt', '--prompt', [CompletionResultType]::ParameterName, 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'A variable of the saved prompt (repeat): -v lang=German')
            [CompletionResult]::new('--var', '--var', [CompletionResultType]::ParameterName, 'A variable of the saved prompt (repeat): -v lang=German')
            [CompletionResult]::new('--schema', '--schema', [CompletionResultType]::ParameterName, 'The reply is JSON that fits this schema: a file, ''{json schema}'', or ''name str, age int, tags [str]''. Checked, asked again once, else exit 1')
            [CompletionResult]::new('--keep-attachments', '--keep-attachments', [CompletionResultType]::ParameterName, 'Keep a copy of each attached image or PDF in the chat''s folder (otherwise the chat records only its name, type, size and SHA-256)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the exact program, arguments and prompt that would run; run nothing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object (reply, model, provider, timing) instead of the raw reply')
            [CompletionResult]::new('--json-stream', '--json-stream', [CompletionResultType]::ParameterName, 'JSON lines on stdout as the reply streams (for programs such as `ai serve`)')
            [CompletionResult]::new('--yolo', '--yolo', [CompletionResultType]::ParameterName, 'Let the backend act without asking (each CLI''s auto-approve flag)')
            [CompletionResult]::new('--cmd', '--cmd', [CompletionResultType]::ParameterName, 'The reply is one shell command for this system, printed bare')
            [CompletionResult]::new('--run', '--run', [CompletionResultType]::ParameterName, 'Like --cmd, then show it, ask, and run it with your shell (exit with its code)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'With run: do not ask before running the command')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With run: do not ask before running the command')
            [CompletionResult]::new('--no-stdin', '--no-stdin', [CompletionResultType]::ParameterName, 'Do not read standard input, even when it is not a terminal')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Continue the most recently used chat, as `ai reply` does')
            [CompletionResult]::new('--continue', '--continue', [CompletionResultType]::ParameterName, 'Continue the most recently used chat, as `ai reply` does')
            [CompletionResult]::new('--no-chat', '--no-chat', [CompletionResultType]::ParameterName, 'Do not save this prompt as a chat')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Fail at once (exit 75) when the chat is in use by another call, instead of waiting')
            [CompletionResult]::new('--no-kb', '--no-kb', [CompletionResultType]::ParameterName, 'No knowledge base for this call (not the chat''s, nor config "kb.default")')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)')
            [CompletionResult]::new('--interactive', '--interactive', [CompletionResultType]::ParameterName, 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)')
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'Let the model search the knowledge bases itself, with tools (HTTP providers)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Detect installed backend CLIs and local Ollama models; write the config')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Show every alias by provider, and whether it can be used now')
            [CompletionResult]::new('default', 'default', [CompletionResultType]::ParameterValue, 'Show, set or clear the model used when a call names none')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script (completes aliases too)')
            [CompletionResult]::new('chat', 'chat', [CompletionResultType]::ParameterValue, 'Continue a chat (`ai chat ID [MODEL] "prompt"`), start one, or manage them')
            [CompletionResult]::new('reply', 'reply', [CompletionResultType]::ParameterValue, 'Continue the most recently used chat')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve the HTTP API for models, calls and chats on 127.0.0.1')
            [CompletionResult]::new('usage', 'usage', [CompletionResultType]::ParameterValue, 'Tokens and cost of past replies, from what the chats record (estimated where the backend reported none, and marked so)')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve your notes, chats and models to an agent as MCP tools (stdin/stdout)')
            [CompletionResult]::new('kb', 'kb', [CompletionResultType]::ParameterValue, 'Knowledge bases: index a folder of notes, search it, ground answers in it (--kb NAME)')
            [CompletionResult]::new('prompt', 'prompt', [CompletionResultType]::ParameterValue, 'Saved prompts: add, list, show, edit, remove; use one with -p NAME')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ai;init' {
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;list' {
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of a table')
            [CompletionResult]::new('--providers', '--providers', [CompletionResultType]::ParameterName, 'Only the providers (every CLI and HTTP API, with or without an alias)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;default' {
            [CompletionResult]::new('--clear', '--clear', [CompletionResultType]::ParameterName, 'Remove the default')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;completions' {
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;chat' {
            [CompletionResult]::new('-F', '-F ', [CompletionResultType]::ParameterName, 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the backend after this many seconds (default: config "timeout", else 1200)')
            [CompletionResult]::new('--chat', '--chat', [CompletionResultType]::ParameterName, 'Continue chat ID (or start a chat with this name: letters, digits, - and _)')
            [CompletionResult]::new('--system', '--system', [CompletionResultType]::ParameterName, 'System prompt of a new chat (default: config "chat.system")')
            [CompletionResult]::new('--kb', '--kb', [CompletionResultType]::ParameterName, 'Ground the answer in a knowledge base (repeat for several); a chat remembers them')
            [CompletionResult]::new('--data', '--data', [CompletionResultType]::ParameterName, 'A JSON document the model can query with tools (repeat: primary, secondary)')
            [CompletionResult]::new('--tools-file', '--tools-file', [CompletionResultType]::ParameterName, 'Domain tools over the --data documents, declared in a JSON file')
            [CompletionResult]::new('--tool', '--tool', [CompletionResultType]::ParameterName, 'Offer a command tool of config "tools.commands" (repeat); each run is asked for')
            [CompletionResult]::new('--mcp', '--mcp', [CompletionResultType]::ParameterName, 'Start an MCP server of config "mcp.servers" for this call and offer its tools (repeat)')
            [CompletionResult]::new('--max-tool-rounds', '--max-tool-rounds', [CompletionResultType]::ParameterName, 'Tool rounds per turn, at most (default: config "tools.max_rounds", else 10)')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}')
            [CompletionResult]::new('--prompt', '--prompt', [CompletionResultType]::ParameterName, 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'A variable of the saved prompt (repeat): -v lang=German')
            [CompletionResult]::new('--var', '--var', [CompletionResultType]::ParameterName, 'A variable of the saved prompt (repeat): -v lang=German')
            [CompletionResult]::new('--schema', '--schema', [CompletionResultType]::ParameterName, 'The reply is JSON that fits this schema: a file, ''{json schema}'', or ''name str, age int, tags [str]''. Checked, asked again once, else exit 1')
            [CompletionResult]::new('--keep-attachments', '--keep-attachments', [CompletionResultType]::ParameterName, 'Keep a copy of each attached image or PDF in the chat''s folder (otherwise the chat records only its name, type, size and SHA-256)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the exact program, arguments and prompt that would run; run nothing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object (reply, model, provider, timing) instead of the raw reply')
            [CompletionResult]::new('--json-stream', '--json-stream', [CompletionResultType]::ParameterName, 'JSON lines on stdout as the reply streams (for programs such as `ai serve`)')
            [CompletionResult]::new('--yolo', '--yolo', [CompletionResultType]::ParameterName, 'Let the backend act without asking (each CLI''s auto-approve flag)')
            [CompletionResult]::new('--cmd', '--cmd', [CompletionResultType]::ParameterName, 'The reply is one shell command for this system, printed bare')
            [CompletionResult]::new('--run', '--run', [CompletionResultType]::ParameterName, 'Like --cmd, then show it, ask, and run it with your shell (exit with its code)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'With run: do not ask before running the command')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With run: do not ask before running the command')
            [CompletionResult]::new('--no-stdin', '--no-stdin', [CompletionResultType]::ParameterName, 'Do not read standard input, even when it is not a terminal')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Continue the most recently used chat, as `ai reply` does')
            [CompletionResult]::new('--continue', '--continue', [CompletionResultType]::ParameterName, 'Continue the most recently used chat, as `ai reply` does')
            [CompletionResult]::new('--no-chat', '--no-chat', [CompletionResultType]::ParameterName, 'Do not save this prompt as a chat')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Fail at once (exit 75) when the chat is in use by another call, instead of waiting')
            [CompletionResult]::new('--no-kb', '--no-kb', [CompletionResultType]::ParameterName, 'No knowledge base for this call (not the chat''s, nor config "kb.default")')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)')
            [CompletionResult]::new('--interactive', '--interactive', [CompletionResultType]::ParameterName, 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)')
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'Let the model search the knowledge bases itself, with tools (HTTP providers)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List chats, most recently used first')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find chats by their words: every word, in any order and any case, in the title or the messages. Most recently used first')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show a chat''s messages')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Print a chat as Markdown or JSON (both import back unchanged)')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Create a chat from an export (FILE, or - for standard input); prints its ID')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete chats (waits for a turn in progress on them)')
            [CompletionResult]::new('rename', 'rename', [CompletionResultType]::ParameterValue, 'Give a chat a title')
            [CompletionResult]::new('retry', 'retry', [CompletionResultType]::ParameterValue, 'Resend the prompt of a turn that failed')
            [CompletionResult]::new('compact', 'compact', [CompletionResultType]::ParameterValue, 'Summarize all but the newest exchanges with the chat''s own model; the summary is sent in their place from then on (the messages stay on disk)')
            [CompletionResult]::new('gc', 'gc', [CompletionResultType]::ParameterValue, 'Delete chats not used for a while')
            [CompletionResult]::new('new', 'new', [CompletionResultType]::ParameterValue, 'Create an empty chat and print its ID (for scripts)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ai;chat;list' {
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Show at most N chats (0: all)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of a table')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;chat;search' {
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Show at most N chats (0: all)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;chat;show' {
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of text')
            [CompletionResult]::new('--stats', '--stats', [CompletionResultType]::ParameterName, 'Counts instead of messages: messages, estimated tokens, reported usage, models')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;chat;export' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;chat;import' {
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;chat;delete' {
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Fail at once when a chat is in use')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;chat;rename' {
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;chat;retry' {
            [CompletionResult]::new('-F', '-F ', [CompletionResultType]::ParameterName, 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the backend after this many seconds (default: config "timeout", else 1200)')
            [CompletionResult]::new('--chat', '--chat', [CompletionResultType]::ParameterName, 'Continue chat ID (or start a chat with this name: letters, digits, - and _)')
            [CompletionResult]::new('--system', '--system', [CompletionResultType]::ParameterName, 'System prompt of a new chat (default: config "chat.system")')
            [CompletionResult]::new('--kb', '--kb', [CompletionResultType]::ParameterName, 'Ground the answer in a knowledge base (repeat for several); a chat remembers them')
            [CompletionResult]::new('--data', '--data', [CompletionResultType]::ParameterName, 'A JSON document the model can query with tools (repeat: primary, secondary)')
            [CompletionResult]::new('--tools-file', '--tools-file', [CompletionResultType]::ParameterName, 'Domain tools over the --data documents, declared in a JSON file')
            [CompletionResult]::new('--tool', '--tool', [CompletionResultType]::ParameterName, 'Offer a command tool of config "tools.commands" (repeat); each run is asked for')
            [CompletionResult]::new('--mcp', '--mcp', [CompletionResultType]::ParameterName, 'Start an MCP server of config "mcp.servers" for this call and offer its tools (repeat)')
            [CompletionResult]::new('--max-tool-rounds', '--max-tool-rounds', [CompletionResultType]::ParameterName, 'Tool rounds per turn, at most (default: config "tools.max_rounds", else 10)')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}')
            [CompletionResult]::new('--prompt', '--prompt', [CompletionResultType]::ParameterName, 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'A variable of the saved prompt (repeat): -v lang=German')
            [CompletionResult]::new('--var', '--var', [CompletionResultType]::ParameterName, 'A variable of the saved prompt (repeat): -v lang=German')
            [CompletionResult]::new('--schema', '--schema', [CompletionResultType]::ParameterName, 'The reply is JSON that fits this schema: a file, ''{json schema}'', or ''name str, age int, tags [str]''. Checked, asked again once, else exit 1')
            [CompletionResult]::new('--keep-attachments', '--keep-attachments', [CompletionResultType]::ParameterName, 'Keep a copy of each attached image or PDF in the chat''s folder (otherwise the chat records only its name, type, size and SHA-256)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the exact program, arguments and prompt that would run; run nothing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object (reply, model, provider, timing) instead of the raw reply')
            [CompletionResult]::new('--json-stream', '--json-stream', [CompletionResultType]::ParameterName, 'JSON lines on stdout as the reply streams (for programs such as `ai serve`)')
            [CompletionResult]::new('--yolo', '--yolo', [CompletionResultType]::ParameterName, 'Let the backend act without asking (each CLI''s auto-approve flag)')
            [CompletionResult]::new('--cmd', '--cmd', [CompletionResultType]::ParameterName, 'The reply is one shell command for this system, printed bare')
            [CompletionResult]::new('--run', '--run', [CompletionResultType]::ParameterName, 'Like --cmd, then show it, ask, and run it with your shell (exit with its code)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'With run: do not ask before running the command')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With run: do not ask before running the command')
            [CompletionResult]::new('--no-stdin', '--no-stdin', [CompletionResultType]::ParameterName, 'Do not read standard input, even when it is not a terminal')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Continue the most recently used chat, as `ai reply` does')
            [CompletionResult]::new('--continue', '--continue', [CompletionResultType]::ParameterName, 'Continue the most recently used chat, as `ai reply` does')
            [CompletionResult]::new('--no-chat', '--no-chat', [CompletionResultType]::ParameterName, 'Do not save this prompt as a chat')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Fail at once (exit 75) when the chat is in use by another call, instead of waiting')
            [CompletionResult]::new('--no-kb', '--no-kb', [CompletionResultType]::ParameterName, 'No knowledge base for this call (not the chat''s, nor config "kb.default")')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)')
            [CompletionResult]::new('--interactive', '--interactive', [CompletionResultType]::ParameterName, 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)')
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'Let the model search the knowledge bases itself, with tools (HTTP providers)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;chat;compact' {
            [CompletionResult]::new('--keep', '--keep', [CompletionResultType]::ParameterName, 'Exchanges to keep as they are')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the backend after this many seconds')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Fail at once when the chat is in use')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;chat;gc' {
            [CompletionResult]::new('--older-than', '--older-than', [CompletionResultType]::ParameterName, 'Age: a number and s, m, h, d or w (e.g. 30d)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Only print what would be deleted')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;chat;new' {
            [CompletionResult]::new('--system', '--system', [CompletionResultType]::ParameterName, 'The chat''s system prompt')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'A name instead of a generated ID')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;chat;help' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List chats, most recently used first')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find chats by their words: every word, in any order and any case, in the title or the messages. Most recently used first')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show a chat''s messages')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Print a chat as Markdown or JSON (both import back unchanged)')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Create a chat from an export (FILE, or - for standard input); prints its ID')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete chats (waits for a turn in progress on them)')
            [CompletionResult]::new('rename', 'rename', [CompletionResultType]::ParameterValue, 'Give a chat a title')
            [CompletionResult]::new('retry', 'retry', [CompletionResultType]::ParameterValue, 'Resend the prompt of a turn that failed')
            [CompletionResult]::new('compact', 'compact', [CompletionResultType]::ParameterValue, 'Summarize all but the newest exchanges with the chat''s own model; the summary is sent in their place from then on (the messages stay on disk)')
            [CompletionResult]::new('gc', 'gc', [CompletionResultType]::ParameterValue, 'Delete chats not used for a while')
            [CompletionResult]::new('new', 'new', [CompletionResultType]::ParameterValue, 'Create an empty chat and print its ID (for scripts)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ai;chat;help;list' {
            break
        }
        'ai;chat;help;search' {
            break
        }
        'ai;chat;help;show' {
            break
        }
        'ai;chat;help;export' {
            break
        }
        'ai;chat;help;import' {
            break
        }
        'ai;chat;help;delete' {
            break
        }
        'ai;chat;help;rename' {
            break
        }
        'ai;chat;help;retry' {
            break
        }
        'ai;chat;help;compact' {
            break
        }
        'ai;chat;help;gc' {
            break
        }
        'ai;chat;help;new' {
            break
        }
        'ai;chat;help;help' {
            break
        }
        'ai;reply' {
            [CompletionResult]::new('-F', '-F ', [CompletionResultType]::ParameterName, 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Send files as context: a file, or a folder''s top-level files (repeat, or join with commas). An image or a PDF is attached whole (also `-a`, `--attach`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the backend after this many seconds (default: config "timeout", else 1200)')
            [CompletionResult]::new('--chat', '--chat', [CompletionResultType]::ParameterName, 'Continue chat ID (or start a chat with this name: letters, digits, - and _)')
            [CompletionResult]::new('--system', '--system', [CompletionResultType]::ParameterName, 'System prompt of a new chat (default: config "chat.system")')
            [CompletionResult]::new('--kb', '--kb', [CompletionResultType]::ParameterName, 'Ground the answer in a knowledge base (repeat for several); a chat remembers them')
            [CompletionResult]::new('--data', '--data', [CompletionResultType]::ParameterName, 'A JSON document the model can query with tools (repeat: primary, secondary)')
            [CompletionResult]::new('--tools-file', '--tools-file', [CompletionResultType]::ParameterName, 'Domain tools over the --data documents, declared in a JSON file')
            [CompletionResult]::new('--tool', '--tool', [CompletionResultType]::ParameterName, 'Offer a command tool of config "tools.commands" (repeat); each run is asked for')
            [CompletionResult]::new('--mcp', '--mcp', [CompletionResultType]::ParameterName, 'Start an MCP server of config "mcp.servers" for this call and offer its tools (repeat)')
            [CompletionResult]::new('--max-tool-rounds', '--max-tool-rounds', [CompletionResultType]::ParameterName, 'Tool rounds per turn, at most (default: config "tools.max_rounds", else 10)')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}')
            [CompletionResult]::new('--prompt', '--prompt', [CompletionResultType]::ParameterName, 'Use saved prompt NAME (`ai prompt list`): the input fills its {input}')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'A variable of the saved prompt (repeat): -v lang=German')
            [CompletionResult]::new('--var', '--var', [CompletionResultType]::ParameterName, 'A variable of the saved prompt (repeat): -v lang=German')
            [CompletionResult]::new('--schema', '--schema', [CompletionResultType]::ParameterName, 'The reply is JSON that fits this schema: a file, ''{json schema}'', or ''name str, age int, tags [str]''. Checked, asked again once, else exit 1')
            [CompletionResult]::new('--keep-attachments', '--keep-attachments', [CompletionResultType]::ParameterName, 'Keep a copy of each attached image or PDF in the chat''s folder (otherwise the chat records only its name, type, size and SHA-256)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the exact program, arguments and prompt that would run; run nothing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object (reply, model, provider, timing) instead of the raw reply')
            [CompletionResult]::new('--json-stream', '--json-stream', [CompletionResultType]::ParameterName, 'JSON lines on stdout as the reply streams (for programs such as `ai serve`)')
            [CompletionResult]::new('--yolo', '--yolo', [CompletionResultType]::ParameterName, 'Let the backend act without asking (each CLI''s auto-approve flag)')
            [CompletionResult]::new('--cmd', '--cmd', [CompletionResultType]::ParameterName, 'The reply is one shell command for this system, printed bare')
            [CompletionResult]::new('--run', '--run', [CompletionResultType]::ParameterName, 'Like --cmd, then show it, ask, and run it with your shell (exit with its code)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'With run: do not ask before running the command')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With run: do not ask before running the command')
            [CompletionResult]::new('--no-stdin', '--no-stdin', [CompletionResultType]::ParameterName, 'Do not read standard input, even when it is not a terminal')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Continue the most recently used chat, as `ai reply` does')
            [CompletionResult]::new('--continue', '--continue', [CompletionResultType]::ParameterName, 'Continue the most recently used chat, as `ai reply` does')
            [CompletionResult]::new('--no-chat', '--no-chat', [CompletionResultType]::ParameterName, 'Do not save this prompt as a chat')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Fail at once (exit 75) when the chat is in use by another call, instead of waiting')
            [CompletionResult]::new('--no-kb', '--no-kb', [CompletionResultType]::ParameterName, 'No knowledge base for this call (not the chat''s, nor config "kb.default")')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)')
            [CompletionResult]::new('--interactive', '--interactive', [CompletionResultType]::ParameterName, 'A conversation at the terminal: each line you type is one turn of the chat (`ai -i MODEL`, `ai chat ID -i`)')
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'Let the model search the knowledge bases itself, with tools (HTTP providers)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;serve' {
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Address to listen on')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'The bearer token clients must send, 16 characters or more (default: AI_CLI_SERVER_TOKEN, else a new one, printed at start)')
            [CompletionResult]::new('--max-calls', '--max-calls', [CompletionResultType]::ParameterName, 'Model calls run at once; more are answered 429 with Retry-After')
            [CompletionResult]::new('--max-connections', '--max-connections', [CompletionResultType]::ParameterName, 'Open connections at once; more are answered 503 and closed')
            [CompletionResult]::new('--call-timeout', '--call-timeout', [CompletionResultType]::ParameterName, 'Stop a call (as Ctrl+C would, keeping its partial reply) after this many seconds')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'Close a connection whose request has not fully arrived after this many seconds')
            [CompletionResult]::new('--max-output', '--max-output', [CompletionResultType]::ParameterName, 'The most output of one `ai` child kept in memory (one line of it, or a whole list); beyond it the child is stopped and the call fails with 502')
            [CompletionResult]::new('--no-auth', '--no-auth', [CompletionResultType]::ParameterName, 'Require no token (loopback only)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;usage' {
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only replies of this last while: a number and s, m, h, d or w (e.g. 7d)')
            [CompletionResult]::new('--by', '--by', [CompletionResultType]::ParameterName, 'Group by model (provider:model), provider, or day')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of a table')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;mcp' {
            [CompletionResult]::new('--kb', '--kb', [CompletionResultType]::ParameterName, 'The knowledge bases to offer (repeat or comma-separate; default: all)')
            [CompletionResult]::new('--models', '--models', [CompletionResultType]::ParameterName, 'The models `ask` may use (comma-separated aliases; default: every alias)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop an `ask` after this many seconds (default 600)')
            [CompletionResult]::new('--no-kb', '--no-kb', [CompletionResultType]::ParameterName, 'Offer no knowledge base')
            [CompletionResult]::new('--no-ask', '--no-ask', [CompletionResultType]::ParameterName, 'Do not offer `ask`')
            [CompletionResult]::new('--no-chats', '--no-chats', [CompletionResultType]::ParameterName, 'Do not offer `list_chats` and `read_chat`')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;kb' {
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Register a folder of notes as knowledge base NAME and index it')
            [CompletionResult]::new('sync', 'sync', [CompletionResultType]::ParameterValue, 'Bring indexes up to date with their folders (all, or the NAMEs given)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List knowledge bases')
            [CompletionResult]::new('stats', 'stats', [CompletionResultType]::ParameterValue, 'Notes, passages, size on disk, embedding model and last sync of a knowledge base')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Search a knowledge base: the best notes and their passages')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print one note')
            [CompletionResult]::new('copy', 'copy', [CompletionResultType]::ParameterValue, 'Move a knowledge base''s index to another store as it is, without embedding anything again (notes, passages, vectors, links, sync state); its config then points there. The index it leaves is not changed')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Forget a knowledge base: deletes its index, never the notes')
            [CompletionResult]::new('model', 'model', [CompletionResultType]::ParameterValue, 'Local embedding models (--embed local): download, list, remove')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ai;kb;add' {
            [CompletionResult]::new('--embed', '--embed', [CompletionResultType]::ParameterName, 'Also search by meaning, with embeddings from PROVIDER:MODEL (openai:text-embedding-3-small, gemini:gemini-embedding-001, ollama:nomic-embed-text, …), or a local model with no server or key: local, local:NAME (ai kb model list), local:/path/to/model-dir. Default: keywords only')
            [CompletionResult]::new('--dimensions', '--dimensions', [CompletionResultType]::ParameterName, 'Size of the embeddings, where the model lets you choose (768, 1536, 3072)')
            [CompletionResult]::new('--include', '--include', [CompletionResultType]::ParameterName, 'Index only files matching GLOB (repeat; `*.md`, `docs/**`). Default: text and code files')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Leave out files or folders matching GLOB (repeat; `drafts/**`)')
            [CompletionResult]::new('--description', '--description', [CompletionResultType]::ParameterName, 'What it holds, in a few words')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Keep the index on a PostgreSQL server with pgvector, shared by everyone who adds the same NAME there: postgres://USER@HOST/DATABASE (password from PGPASSWORD or ~/.pgpass), or `postgres` for the URL in AI_KB_DATABASE_URL. Default: a SQLite file')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the sync''s counts as JSON')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;kb;sync' {
            [CompletionResult]::new('--full', '--full', [CompletionResultType]::ParameterName, 'Rebuild from scratch')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the counts as JSON')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'After the sync, keep watching the folders and sync what changes (Ctrl+C ends it)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;kb;list' {
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of a table')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;kb;stats' {
            [CompletionResult]::new('--skipped', '--skipped', [CompletionResultType]::ParameterName, 'List the files the sync leaves out by reason (generated notes by name)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;kb;search' {
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'How many notes (1 to 1000)')
            [CompletionResult]::new('--rerank', '--rerank', [CompletionResultType]::ParameterName, 'Rescore the best candidates with a reranker: `local` (a cross-encoder run in ai), `local:NAME`, or a model alias; `off` for none (default: config kb.rerank)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;kb;show' {
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;kb;copy' {
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Where to: postgres://USER@HOST/DATABASE (password from PGPASSWORD or ~/.pgpass), `postgres` for the URL in AI_KB_DATABASE_URL, or `sqlite` for a file in the home folder')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace the base''s index that the target already holds')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print what was copied as JSON')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;kb;remove' {
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;kb;model' {
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('pull', 'pull', [CompletionResultType]::ParameterValue, 'Download a model from the Hugging Face Hub (a built-in NAME or OWNER/NAME), or check one already downloaded. Resumes an interrupted download')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The built-in models, their sizes, and which are on disk')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Delete a downloaded model')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ai;kb;model;pull' {
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;kb;model;list' {
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of a table')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;kb;model;remove' {
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;kb;model;help' {
            [CompletionResult]::new('pull', 'pull', [CompletionResultType]::ParameterValue, 'Download a model from the Hugging Face Hub (a built-in NAME or OWNER/NAME), or check one already downloaded. Resumes an interrupted download')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The built-in models, their sizes, and which are on disk')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Delete a downloaded model')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ai;kb;model;help;pull' {
            break
        }
        'ai;kb;model;help;list' {
            break
        }
        'ai;kb;model;help;remove' {
            break
        }
        'ai;kb;model;help;help' {
            break
        }
        'ai;kb;help' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Register a folder of notes as knowledge base NAME and index it')
            [CompletionResult]::new('sync', 'sync', [CompletionResultType]::ParameterValue, 'Bring indexes up to date with their folders (all, or the NAMEs given)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List knowledge bases')
            [CompletionResult]::new('stats', 'stats', [CompletionResultType]::ParameterValue, 'Notes, passages, size on disk, embedding model and last sync of a knowledge base')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Search a knowledge base: the best notes and their passages')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print one note')
            [CompletionResult]::new('copy', 'copy', [CompletionResultType]::ParameterValue, 'Move a knowledge base''s index to another store as it is, without embedding anything again (notes, passages, vectors, links, sync state); its config then points there. The index it leaves is not changed')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Forget a knowledge base: deletes its index, never the notes')
            [CompletionResult]::new('model', 'model', [CompletionResultType]::ParameterValue, 'Local embedding models (--embed local): download, list, remove')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ai;kb;help;add' {
            break
        }
        'ai;kb;help;sync' {
            break
        }
        'ai;kb;help;list' {
            break
        }
        'ai;kb;help;stats' {
            break
        }
        'ai;kb;help;search' {
            break
        }
        'ai;kb;help;show' {
            break
        }
        'ai;kb;help;copy' {
            break
        }
        'ai;kb;help;remove' {
            break
        }
        'ai;kb;help;model' {
            [CompletionResult]::new('pull', 'pull', [CompletionResultType]::ParameterValue, 'Download a model from the Hugging Face Hub (a built-in NAME or OWNER/NAME), or check one already downloaded. Resumes an interrupted download')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The built-in models, their sizes, and which are on disk')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Delete a downloaded model')
            break
        }
        'ai;kb;help;model;pull' {
            break
        }
        'ai;kb;help;model;list' {
            break
        }
        'ai;kb;help;model;remove' {
            break
        }
        'ai;kb;help;help' {
            break
        }
        'ai;prompt' {
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Save a prompt: `ai prompt add summarize "Summarize in {lang=English}: {input}"`. Without TEXT, the whole file (front matter and all) is read from standard input')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List saved prompts (yours, then those of config "prompts.dirs")')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a saved prompt in the file format (`ai prompt show X | ai prompt add Y` copies it)')
            [CompletionResult]::new('edit', 'edit', [CompletionResultType]::ParameterValue, 'Edit a saved prompt in $VISUAL or $EDITOR')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Delete a saved prompt of yours')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ai;prompt;add' {
            [CompletionResult]::new('--system', '--system', [CompletionResultType]::ParameterName, 'Its system prompt')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model it uses when the call names none')
            [CompletionResult]::new('--description', '--description', [CompletionResultType]::ParameterName, 'What it does, in a few words')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace a prompt of that name')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;prompt;list' {
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of a table')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;prompt;show' {
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;prompt;edit' {
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;prompt;remove' {
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reply and errors (no notices)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ai;prompt;help' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Save a prompt: `ai prompt add summarize "Summarize in {lang=English}: {input}"`. Without TEXT, the whole file (front matter and all) is read from standard input')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List saved prompts (yours, then those of config "prompts.dirs")')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a saved prompt in the file format (`ai prompt show X | ai prompt add Y` copies it)')
            [CompletionResult]::new('edit', 'edit', [CompletionResultType]::ParameterValue, 'Edit a saved prompt in $VISUAL or $EDITOR')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Delete a saved prompt of yours')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ai;prompt;help;add' {
            break
        }
        'ai;prompt;help;list' {
            break
        }
        'ai;prompt;help;show' {
            break
        }
        'ai;prompt;help;edit' {
            break
        }
        'ai;prompt;help;remove' {
            break
        }
        'ai;prompt;help;help' {
            break
        }
        'ai;help' {
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Detect installed backend CLIs and local Ollama models; write the config')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Show every alias by provider, and whether it can be used now')
            [CompletionResult]::new('default', 'default', [CompletionResultType]::ParameterValue, 'Show, set or clear the model used when a call names none')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script (completes aliases too)')
            [CompletionResult]::new('chat', 'chat', [CompletionResultType]::ParameterValue, 'Continue a chat (`ai chat ID [MODEL] "prompt"`), start one, or manage them')
            [CompletionResult]::new('reply', 'reply', [CompletionResultType]::ParameterValue, 'Continue the most recently used chat')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve the HTTP API for models, calls and chats on 127.0.0.1')
            [CompletionResult]::new('usage', 'usage', [CompletionResultType]::ParameterValue, 'Tokens and cost of past replies, from what the chats record (estimated where the backend reported none, and marked so)')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve your notes, chats and models to an agent as MCP tools (stdin/stdout)')
            [CompletionResult]::new('kb', 'kb', [CompletionResultType]::ParameterValue, 'Knowledge bases: index a folder of notes, search it, ground answers in it (--kb NAME)')
            [CompletionResult]::new('prompt', 'prompt', [CompletionResultType]::ParameterValue, 'Saved prompts: add, list, show, edit, remove; use one with -p NAME')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ai;help;init' {
            break
        }
        'ai;help;list' {
            break
        }
        'ai;help;default' {
            break
        }
        'ai;help;completions' {
            break
        }
        'ai;help;chat' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List chats, most recently used first')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find chats by their words: every word, in any order and any case, in the title or the messages. Most recently used first')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show a chat''s messages')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Print a chat as Markdown or JSON (both import back unchanged)')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Create a chat from an export (FILE, or - for standard input); prints its ID')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete chats (waits for a turn in progress on them)')
            [CompletionResult]::new('rename', 'rename', [CompletionResultType]::ParameterValue, 'Give a chat a title')
            [CompletionResult]::new('retry', 'retry', [CompletionResultType]::ParameterValue, 'Resend the prompt of a turn that failed')
            [CompletionResult]::new('compact', 'compact', [CompletionResultType]::ParameterValue, 'Summarize all but the newest exchanges with the chat''s own model; the summary is sent in their place from then on (the messages stay on disk)')
            [CompletionResult]::new('gc', 'gc', [CompletionResultType]::ParameterValue, 'Delete chats not used for a while')
            [CompletionResult]::new('new', 'new', [CompletionResultType]::ParameterValue, 'Create an empty chat and print its ID (for scripts)')
            break
        }
        'ai;help;chat;list' {
            break
        }
        'ai;help;chat;search' {
            break
        }
        'ai;help;chat;show' {
            break
        }
        'ai;help;chat;export' {
            break
        }
        'ai;help;chat;import' {
            break
        }
        'ai;help;chat;delete' {
            break
        }
        'ai;help;chat;rename' {
            break
        }
        'ai;help;chat;retry' {
            break
        }
        'ai;help;chat;compact' {
            break
        }
        'ai;help;chat;gc' {
            break
        }
        'ai;help;chat;new' {
            break
        }
        'ai;help;reply' {
            break
        }
        'ai;help;serve' {
            break
        }
        'ai;help;usage' {
            break
        }
        'ai;help;mcp' {
            break
        }
        'ai;help;kb' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Register a folder of notes as knowledge base NAME and index it')
            [CompletionResult]::new('sync', 'sync', [CompletionResultType]::ParameterValue, 'Bring indexes up to date with their folders (all, or the NAMEs given)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List knowledge bases')
            [CompletionResult]::new('stats', 'stats', [CompletionResultType]::ParameterValue, 'Notes, passages, size on disk, embedding model and last sync of a knowledge base')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Search a knowledge base: the best notes and their passages')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print one note')
            [CompletionResult]::new('copy', 'copy', [CompletionResultType]::ParameterValue, 'Move a knowledge base''s index to another store as it is, without embedding anything again (notes, passages, vectors, links, sync state); its config then points there. The index it leaves is not changed')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Forget a knowledge base: deletes its index, never the notes')
            [CompletionResult]::new('model', 'model', [CompletionResultType]::ParameterValue, 'Local embedding models (--embed local): download, list, remove')
            break
        }
        'ai;help;kb;add' {
            break
        }
        'ai;help;kb;sync' {
            break
        }
        'ai;help;kb;list' {
            break
        }
        'ai;help;kb;stats' {
            break
        }
        'ai;help;kb;search' {
            break
        }
        'ai;help;kb;show' {
            break
        }
        'ai;help;kb;copy' {
            break
        }
        'ai;help;kb;remove' {
            break
        }
        'ai;help;kb;model' {
            [CompletionResult]::new('pull', 'pull', [CompletionResultType]::ParameterValue, 'Download a model from the Hugging Face Hub (a built-in NAME or OWNER/NAME), or check one already downloaded. Resumes an interrupted download')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The built-in models, their sizes, and which are on disk')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Delete a downloaded model')
            break
        }
        'ai;help;kb;model;pull' {
            break
        }
        'ai;help;kb;model;list' {
            break
        }
        'ai;help;kb;model;remove' {
            break
        }
        'ai;help;prompt' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Save a prompt: `ai prompt add summarize "Summarize in {lang=English}: {input}"`. Without TEXT, the whole file (front matter and all) is read from standard input')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List saved prompts (yours, then those of config "prompts.dirs")')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a saved prompt in the file format (`ai prompt show X | ai prompt add Y` copies it)')
            [CompletionResult]::new('edit', 'edit', [CompletionResultType]::ParameterValue, 'Edit a saved prompt in $VISUAL or $EDITOR')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Delete a saved prompt of yours')
            break
        }
        'ai;help;prompt;add' {
            break
        }
        'ai;help;prompt;list' {
            break
        }
        'ai;help;prompt;show' {
            break
        }
        'ai;help;prompt;edit' {
            break
        }
        'ai;help;prompt;remove' {
            break
        }
        'ai;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
