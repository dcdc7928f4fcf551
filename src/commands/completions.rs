//! `ai completions SHELL`: clap's script, which completes commands, options and the built-in
//! aliases, plus for bash, zsh and fish a hook that asks `ai __complete models` for the aliases of
//! the user's config as well. (clap's PowerShell and Elvish scripts offer no positional values,
//! so the built-in aliases are added to their first word.)

use clap::CommandFactory;
use clap_complete::Shell as Target;

use crate::alias;
use crate::cli::{Cli, Shell};
use crate::config::{Config, Home};
use crate::error::Result;
use crate::output;

pub(crate) fn script(shell: Shell) -> String {
    let target = match shell {
        Shell::Bash => Target::Bash,
        Shell::Zsh => Target::Zsh,
        Shell::Fish => Target::Fish,
        Shell::Powershell => Target::PowerShell,
        Shell::Elvish => Target::Elvish,
    };
    let mut buf = Vec::new();
    clap_complete::generate(target, &mut Cli::command(), "ai", &mut buf);
    let mut text = String::from_utf8_lossy(&buf).into_owned();
    match shell {
        Shell::Bash => text.push_str(BASH_HOOK),
        Shell::Fish => text.push_str(FISH_HOOK),
        Shell::Zsh => text = zsh_with_models(&text),
        Shell::Powershell => {
            text = with_first_word_models(&text, "        'ai' {\n", powershell_model)
        }
        Shell::Elvish => text = with_first_word_models(&text, "        &'ai'= {\n", elvish_model),
    }
    text
}

/// Add a completion line per built-in alias right after `block_start` (the block of the first
/// word); the script is returned unchanged if clap's layout ever stops having that line.
fn with_first_word_models(
    generated: &str,
    block_start: &str,
    line: fn(&str, &str) -> String,
) -> String {
    let Some(pos) = generated.find(block_start) else {
        return generated.to_owned();
    };
    let at = pos + block_start.len();
    let lines: String = alias::BUILTIN
        .iter()
        .map(|(a, p, m)| line(a, &format!("{p} {m}")))
        .collect();
    format!("{}{lines}{}", &generated[..at], &generated[at..])
}

fn powershell_model(alias: &str, desc: &str) -> String {
    let q = |s: &str| s.replace('\'', "''");
    format!(
        "            [CompletionResult]::new('{}', '{}', [CompletionResultType]::ParameterValue, '{}')\n",
        q(alias),
        q(alias),
        q(desc)
    )
}

fn elvish_model(alias: &str, desc: &str) -> String {
    let q = |s: &str| s.replace('\'', "''");
    format!("            cand '{}' '{}'\n", q(alias), q(desc))
}

pub(crate) fn run(shell: Shell) -> Result<()> {
    output::print_stdout(&script(shell))
}

/// `ai __complete models`: every alias, one per line (built-in and config).
pub(crate) fn complete(kind: &str) -> Result<()> {
    match kind {
        "models" => {
            let config = Home::locate().and_then(|h| Config::load(&h));
            let names: Vec<String> = match config {
                Ok(c) => alias::table(&c).into_keys().collect(),
                Err(_) => alias::BUILTIN
                    .iter()
                    .map(|(a, _, _)| (*a).to_owned())
                    .collect(),
            };
            let mut out = names.join("\n");
            out.push('\n');
            output::print_stdout(&out)
        }
        "prompts" => {
            let names: Vec<String> =
                match Home::locate().and_then(|h| Config::load(&h).map(|c| (h, c))) {
                    Ok((home, config)) => crate::prompts::list(&home.dir, &config)
                        .into_iter()
                        .filter_map(|p| p.ok().map(|p| p.name))
                        .collect(),
                    Err(_) => Vec::new(),
                };
            let mut out = String::new();
            for n in names {
                out.push_str(&n);
                out.push('\n');
            }
            output::print_stdout(&out)
        }
        _ => Ok(()),
    }
}

const BASH_HOOK: &str = r#"
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
"#;

const FISH_HOOK: &str = r#"
# Aliases from your config and chat IDs (with titles), asked from `ai` itself.
complete -c ai -n "__fish_is_first_arg" -f -a "(ai __complete models 2>/dev/null)"
complete -c ai -n "__fish_seen_subcommand_from chat show delete rename retry" -f -a "(ai __complete chats 2>/dev/null)"
complete -c ai -l chat -x -a "(ai __complete chats 2>/dev/null)"
# Saved prompts, for -p and `ai prompt show|edit|remove`.
complete -c ai -s p -l prompt -x -a "(ai __complete prompts 2>/dev/null)"
complete -c ai -n "__fish_seen_subcommand_from prompt; and __fish_seen_subcommand_from show edit remove" -f -a "(ai __complete prompts 2>/dev/null)"
"#;

/// Swap the static alias list of the positional words for a function that asks `ai`.
fn zsh_with_models(generated: &str) -> String {
    let builtins: Vec<&str> = alias::BUILTIN.iter().map(|(a, _, _)| *a).collect();
    let list = format!("({})", builtins.join(" "));
    let replaced = generated.replace(&list, "_ai_models");
    // `-p NAME`: the saved prompts.
    let replaced: String = replaced
        .split_inclusive('\n')
        .map(|l| {
            if l.contains("[Use saved prompt NAME") {
                l.replace(":NAME:_default", ":NAME:_ai_prompts")
            } else {
                l.to_owned()
            }
        })
        .collect();
    let hook = concat!(
        "\n(( $+functions[_ai_models] )) ||\n_ai_models() {\n",
        "    local -a models chats\n",
        "    models=(${(f)\"$(ai __complete models 2>/dev/null)\"})\n",
        "    if [[ ${words[2]} == chat ]]; then\n",
        "        chats=(${(f)\"$(ai __complete chats 2>/dev/null | sed 's/:/\\\\:/g; s/\\t/:/')\"})\n",
        "        _describe -t chats 'chat' chats\n",
        "    fi\n",
        "    _describe -t models 'model' models\n",
        "}\n",
        "\n(( $+functions[_ai_prompts] )) ||\n_ai_prompts() {\n",
        "    local -a prompts\n",
        "    prompts=(${(f)\"$(ai __complete prompts 2>/dev/null)\"})\n",
        "    _describe -t prompts 'saved prompt' prompts\n",
        "}\n"
    );
    // Define the helper before the file's last block (which runs `_ai` or registers it).
    match replaced.rfind("\nif [ \"$funcstack[1]\" = \"_ai\" ]") {
        Some(pos) => format!("{}{hook}{}", &replaced[..pos], &replaced[pos..]),
        None => format!("{replaced}{hook}"),
    }
}
