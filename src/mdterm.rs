//! Markdown styled for a terminal, line by line, as a reply streams in `ai -i`: headings bold
//! (the `#`s dropped), `**bold**`, list bullets, quotes, rules, and fenced code blocks set off
//! from the text. Only bold, dim, italic and underline are used (no colours), and only on text
//! already cleaned of control sequences ([`crate::sanitize`]), so a reply can style nothing
//! itself. Off when stdout is not a terminal (a pipe gets the reply's bytes exactly) or with
//! config `chat.markdown: false`.

const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const UNDERLINE: &str = "\x1b[4m";
const RESET: &str = "\x1b[0m";

/// Where the current line is.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Its start, held back until it shows what kind of line it is.
    #[default]
    Start,
    /// Text, streamed as it comes, `**bold**` styled.
    Text,
    /// A heading: bold to its end.
    Heading,
    /// A line of a fenced code block: as it is.
    Code,
    /// The opening fence (with its language): dim.
    Fence,
}

/// The state carried through a reply: where the line is, the fenced code block it is in, and
/// what is held back. Text streams as it arrives; only the first few characters of a line (a
/// `#`, `-`, `>` or fence that may start a heading, a list item, a quote or a code block) and
/// a lone `*` (which may open `**`) wait for the next piece.
#[derive(Debug, Default)]
pub(crate) struct Styler {
    at: At,
    /// The fence of the code block the reply is in (```` ``` ```` or `~~~`, as long as opened).
    fence: Option<String>,
    /// The start of the line, held back.
    head: String,
    /// Inside `**bold**`.
    bold: bool,
    /// Inside a `code span`.
    span: bool,
    /// A `*` or `_` held back: the next character says whether it opens or closes bold.
    star: Option<char>,
    /// `**` seen outside bold: it opens bold if a word follows.
    opening: Option<char>,
}

impl Styler {
    pub(crate) fn new() -> Styler {
        Styler::default()
    }

    /// Take more cleaned text; append what can be shown now to `out`.
    pub(crate) fn push(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            if c == '\n' {
                self.end_line(out);
                out.push('\n');
            } else {
                self.char(c, out);
            }
        }
    }

    /// The end of the reply: what is held back, shown.
    pub(crate) fn finish(&mut self, out: &mut String) {
        self.end_line(out);
    }

    fn char(&mut self, c: char, out: &mut String) {
        match self.at {
            At::Start => {
                self.head.push(c);
                self.decide(false, out);
            }
            At::Code | At::Fence | At::Heading => out.push(c),
            At::Text => self.inline(c, out),
        }
    }

    /// Can the held-back start of the line still become something other than text?
    fn decide(&mut self, line_ended: bool, out: &mut String) {
        let head = std::mem::take(&mut self.head);
        let trimmed = head.trim_start();
        let indent = &head[..head.len() - trimmed.len()];
        if let Some(fence) = self.fence.clone() {
            let mark = fence.chars().next().unwrap_or('`');
            if trimmed.chars().all(|c| c == mark) && !line_ended {
                self.head = head;
                return;
            }
            if trimmed.chars().all(|c| c == mark) && trimmed.len() >= fence.len() {
                // The closing fence.
                self.fence = None;
                out.push_str(&format!("{DIM}{head}{RESET}"));
            } else {
                out.push_str(&format!("{DIM}│{RESET} {head}"));
                self.at = At::Code;
            }
            return;
        }
        let hashes = trimmed.chars().take_while(|&c| c == '#').count();
        let first = trimmed.chars().next();
        let rest_after = |n: usize| trimmed.get(n..).unwrap_or("");
        // Fences open a code block: the rest of the line (the language) as it is.
        for mark in ['`', '~'] {
            let n = trimmed.chars().take_while(|&c| c == mark).count();
            if n >= 3 {
                if !line_ended && rest_after(n).is_empty() {
                    self.head = head;
                    return;
                }
                self.fence = Some(trimmed[..n].to_owned());
                out.push_str(&format!("{DIM}{head}"));
                self.at = At::Fence;
                return;
            }
        }
        match first {
            None => {
                if !line_ended {
                    self.head = head;
                    return;
                }
                out.push_str(&head);
            }
            Some('#')
                if (1..=6).contains(&hashes) && rest_after(hashes).is_empty() && !line_ended =>
            {
                self.head = head;
            }
            Some('#') if (1..=6).contains(&hashes) && rest_after(hashes).starts_with(' ') => {
                let style = if hashes <= 2 {
                    format!("{BOLD}{UNDERLINE}")
                } else {
                    BOLD.to_owned()
                };
                out.push_str(&format!("{indent}{style}{}", rest_after(hashes + 1)));
                self.at = At::Heading;
            }
            Some('`' | '~')
                if !line_ended && trimmed.chars().all(|c| c == first.unwrap_or('`')) =>
            {
                self.head = head;
            }
            Some(m @ ('-' | '*' | '_' | '+' | '>')) => {
                let marks: String = trimmed.chars().filter(|c| !c.is_whitespace()).collect();
                let only = marks.chars().all(|c| c == m);
                if only && !line_ended && (m != '>' || trimmed.len() == 1) {
                    // `-`, `--`, `- -`: a rule, a list item or text; the next says.
                    if m == '>' || !trimmed.ends_with(' ') || marks.len() > 1 {
                        self.head = head;
                        return;
                    }
                }
                if only && line_ended && marks.len() >= 3 && m != '+' && m != '>' {
                    out.push_str(&format!("{DIM}{}{RESET}", "─".repeat(40)));
                    return;
                }
                let item = matches!(m, '-' | '*' | '+') && trimmed[1..].starts_with(' ');
                if item {
                    out.push_str(indent);
                    out.push_str("• ");
                    self.at = At::Text;
                    for c in trimmed[2..].chars() {
                        self.inline(c, out);
                    }
                } else if m == '>' {
                    out.push_str(&format!("{indent}{DIM}│{RESET} "));
                    self.at = At::Text;
                    for c in trimmed[1..].trim_start().chars() {
                        self.inline(c, out);
                    }
                } else {
                    self.at = At::Text;
                    for c in head.chars() {
                        self.inline(c, out);
                    }
                }
            }
            Some(_) => {
                self.at = At::Text;
                for c in head.chars() {
                    self.inline(c, out);
                }
            }
        }
    }

    /// One character of text: `**` and `__` toggle bold outside code spans.
    fn inline(&mut self, c: char, out: &mut String) {
        if let Some(s) = self.opening.take() {
            if c.is_whitespace() {
                // `2 ** 3`: no bold.
                out.push(s);
                out.push(s);
            } else {
                self.bold = true;
                out.push_str(BOLD);
            }
        }
        if let Some(s) = self.star.take() {
            if c == s && !self.span {
                if self.bold {
                    self.bold = false;
                    out.push_str(RESET);
                } else {
                    self.opening = Some(s);
                }
                return;
            }
            out.push(s);
        }
        if c == '`' {
            self.span = !self.span;
        }
        if (c == '*' || c == '_') && !self.span {
            self.star = Some(c);
            return;
        }
        out.push(c);
    }

    /// A newline, or the end of the reply: what is held back shown, styles closed.
    fn end_line(&mut self, out: &mut String) {
        if self.at == At::Start {
            if self.head.is_empty() {
                return;
            }
            self.decide(true, out);
        }
        if let Some(s) = self.opening.take() {
            out.push(s);
            out.push(s);
        }
        if let Some(s) = self.star.take() {
            out.push(s);
        }
        match self.at {
            At::Heading | At::Fence => out.push_str(RESET),
            At::Text if self.bold => out.push_str(RESET),
            _ => {}
        }
        self.at = At::Start;
        self.bold = false;
        self.span = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn styled(text: &str) -> String {
        let mut s = Styler::new();
        let mut out = String::new();
        // Streamed in small pieces, cut anywhere.
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(3) {
            s.push(&piece.iter().collect::<String>(), &mut out);
        }
        s.finish(&mut out);
        out
    }

    #[test]
    fn headings_bold_lists_quotes_and_rules() {
        assert_eq!(styled("# Title\n"), "\x1b[1m\x1b[4mTitle\x1b[0m\n");
        assert_eq!(styled("### Small"), "\x1b[1mSmall\x1b[0m");
        assert_eq!(styled("#hashtag"), "#hashtag");
        assert_eq!(styled("a **b** c\n"), "a \x1b[1mb\x1b[0m c\n");
        assert_eq!(styled("2 ** 3 and 4**"), "2 ** 3 and 4**");
        assert_eq!(styled("snake_case_name"), "snake_case_name");
        assert_eq!(styled("- one\n  * two\n"), "• one\n  • two\n");
        assert_eq!(styled("> said\n"), "\x1b[2m│\x1b[0m said\n");
        assert_eq!(
            styled("---\n"),
            format!("\x1b[2m{}\x1b[0m\n", "─".repeat(40))
        );
        assert_eq!(styled("`**not bold**` x"), "`**not bold**` x");
    }

    #[test]
    fn code_blocks_are_set_off_and_not_styled() {
        let out = styled("```rust\n# not a heading\n**x**\n```\nafter **y**\n");
        assert_eq!(
            out,
            "\x1b[2m```rust\x1b[0m\n\x1b[2m│\x1b[0m # not a heading\n\x1b[2m│\x1b[0m **x**\n\
             \x1b[2m```\x1b[0m\n after \x1b[1my\x1b[0m\n"
                .replace("\n after", "\nafter")
        );
    }

    #[test]
    fn no_input_panics() {
        for s in [
            "",
            "#",
            "**",
            "``",
            "```",
            "> ",
            "-",
            "é**é",
            "# é",
            "* ",
            "__a__",
            "~~~~\n~~~",
        ] {
            let _ = styled(s);
        }
    }
}
